// A flat federation's round tier (engine/sim/round_tier.hpp): the server half aggregates into the
// global model, and a cloud round is one round of the population's clients. Nothing here knows
// of edges.
#include "engine/sim/round_rules.hpp"
#include "engine/sim/round_tier.hpp"
#include "engine/sim/server_aggregation.hpp"

namespace drift {
namespace {

class FlatTier final : public RoundTier {
 public:
  FlatTier(const Scenario& scenario, std::unique_ptr<ServerAlgorithm> algorithm)
      : scenario_(scenario), algorithm_(std::move(algorithm)) {}

  std::string begin(std::uint32_t round, double t, const NamedTensors&, RoundReport&) override {
    round_ = round;
    start_ = t;
    pending_ = true;
    step_ = CloudStep{};
    return "";
  }

  // The round, then the step that closes it.
  TierNext next(const NamedTensors&, Roster&, double, bool) override {
    TierNext next;
    if (pending_)
      next.rounds.push_back({kNoEdge, round_, start_});
    else
      next.step = true;
    pending_ = false;
    return next;
  }

  void task(const TierRound& round, std::uint64_t version, const NamedTensors& global, TaskReady ready) override {
    ready(make_task(scenario_, round.serial, version, global, algorithm_->broadcast(round.serial)));
  }

  const NamedTensors* start_model(const TierRound&, std::uint32_t client) const override {
    return algorithm_->start_model(client);
  }

  void aggregate(const TierRound&, NamedTensors& global, std::vector<ClientUpdate> updates,
                 const AggregationInput& input, Aggregated done) override {
    done(aggregate_at(*algorithm_, global, updates, input));
  }

  void finish(const TierRound&, double end, const std::vector<std::uint32_t>& aggregated, EdgeAggregated result,
              RoundReport& report) override {
    if (result.moved) report.algorithm = std::move(result.metrics);
    step_ = {end, aggregated, std::move(result.shares)};
  }

  // The server half's step was the round's own aggregation.
  void close(NamedTensors&, RoundReport&, std::function<void(CloudStep)> done) override { done(std::move(step_)); }

  void after_host(std::function<void()> next) override { next(); }

  void archive(StateArchive& ar) override {
    ar.section("server half");
    algorithm_->archive(ar);
  }

 private:
  const Scenario& scenario_;
  std::unique_ptr<ServerAlgorithm> algorithm_;
  std::uint32_t round_ = 0;
  double start_ = 0.0;
  bool pending_ = false;  // the cloud round's one round has not run yet
  CloudStep step_;
};

}  // namespace

std::unique_ptr<RoundTier> make_flat_tier(const Scenario& scenario, std::unique_ptr<ServerAlgorithm> algorithm) {
  return std::make_unique<FlatTier>(scenario, std::move(algorithm));
}

}  // namespace drift
