// The synchronous cloud over the edges ([hierarchy] with cloud = "sync", docs/hierarchy.md): a
// cloud round samples online edges and sends each the global model; each runs
// hierarchy.edge_rounds rounds of its own clients (every edge's k-th round side by side: a wave);
// then the cloud averages the models of the edges that reported, weighted by their clients'
// samples.
#include <algorithm>

#include "engine/algorithms/aggregation.hpp"
#include "engine/core/rng.hpp"
#include "engine/population/topology.hpp"
#include "engine/sim/edge_metrics.hpp"
#include "engine/sim/edge_tier.hpp"
#include "engine/sim/round_rules.hpp"

namespace drift {
namespace {

class SyncCloud final : public EdgeTier {
 public:
  using EdgeTier::EdgeTier;

  std::string begin(std::uint32_t round, double t, const NamedTensors& global, RoundReport&) override {
    begin_cloud_round(round, t, global);
    presence_.set_round(round);
    order_ = sample_edges(round, t);
    if (order_.empty()) {  // every edge is offline: the cloud waits for the first to come back
      double back = kNever;
      for (std::uint32_t e = 0; e < edges_.size(); ++e) back = std::min(back, presence_.next_online(e, t));
      if (back == kNever) return no_edge_can_take_part(round, t);
      start_ = back;
      order_ = sample_edges(round, back);
    }
    for (auto e : order_) {
      auto& edge = edges_[e];
      edge.lost = edge.moved = edge.stopped = false;
      edge.rounds_run = 0;
      edge.aggregated.clear();
      edge.shares.clear();
      edge.metrics.clear();
      host_->pull(e, global);
      edge.clock = edge.began = start_ + link_seconds(e, false);
    }
    return "";
  }

  // The k-th round of every sampled edge still running, in edge order; then the cloud's step.
  TierNext next(const NamedTensors&, Roster&, double, bool) override {
    TierNext next;
    for (auto e : order_) add_round(e, round_, next.rounds);
    next.step = next.rounds.empty();
    return next;
  }

  void close(NamedTensors& global, RoundReport& report, std::function<void(CloudStep)> done) override {
    std::vector<std::uint32_t> reporting;
    const double end = close_edges(report, reporting);
    host_->models(reporting, [this, &global, &report, reporting, end, done](std::vector<NamedTensors> models) {
      CloudStep step;
      step.end = end;
      average_into(global, reporting, std::move(models), report, step);
      std::vector<std::pair<std::uint32_t, const EdgeMetrics*>> reported;
      for (auto e : reporting) reported.emplace_back(e, &edges_[e].metrics);
      report_edge_metrics(report, edges_.size(), reported, step.aggregated);
      weights_.push(report.edge_weight);
      report.edge_participation_bias = participation_bias();
      done(std::move(step));
    });
  }

 private:
  std::vector<std::uint32_t> sample_edges(std::uint32_t round, double t);
  double close_edges(RoundReport& report, std::vector<std::uint32_t>& reporting);
  void average_into(NamedTensors& global, const std::vector<std::uint32_t>& reporting, std::vector<NamedTensors> models,
                    RoundReport& report, CloudStep& step);

  std::vector<std::uint32_t> order_;  // this cloud round's sampled edges, ascending
};

// The edges online at t, ascending; hierarchy.edges_per_round of them drawn from the
// ("edge-sample", round) stream when fewer are wanted.
std::vector<std::uint32_t> SyncCloud::sample_edges(std::uint32_t round, double t) {
  const auto& h = scenario_.hierarchy;
  std::vector<std::uint32_t> online;
  for (std::uint32_t e = 0; e < edges_.size(); ++e)
    if (presence_.online(e, t)) online.push_back(e);
  const auto wanted = static_cast<std::size_t>(h.edges_per_round);
  if (wanted == 0 || wanted >= online.size()) return online;
  Rng rng = make_stream(scenario_.seed, "edge-sample", {round});
  for (std::size_t i = 0; i < wanted; ++i) std::swap(online[i], online[i + rng.below(online.size() - i)]);
  online.resize(wanted);
  std::sort(online.begin(), online.end());
  return online;
}

// The sampled edges' measures, in `report`, and which of them reported (`reporting`: their
// models reached the cloud in time). Returns when the cloud round ends.
double SyncCloud::close_edges(RoundReport& report, std::vector<std::uint32_t>& reporting) {
  const auto& h = scenario_.hierarchy;
  const double deadline_at = h.deadline > 0 ? start_ + h.deadline : kNever;
  size_edge_fields(report, false);
  double end = start_;
  for (auto e : order_) {
    auto& edge = edges_[e];
    report.edges_sampled.push_back(e);
    report.edge_bytes_down += model_bytes_;
    report.edge_updates[e] = static_cast<std::uint32_t>(edge.aggregated.size());
    report.edge_rounds_run[e] = edge.rounds_run;
    report.edge_busy_seconds[e] = edge.clock - edge.began;
    report.edge_cohort_tv[e] = cohort_tv(e, edge.aggregated);
    const double up = link_seconds(e, true);
    // Losing its work, any offline moment since the cloud round began loses the model; keeping
    // it, the edge sends once it is back online, starting over if it goes offline mid-upload
    // (kNever: the upload fits no online stretch, and the edge is lost when its rounds ended).
    const double arrival = h.keep_work ? presence_.upload_arrival(e, edge.clock, up) : edge.clock + up;
    const double lost_at = h.keep_work ? (arrival < kNever ? kNever : edge.clock) : presence_.next_offline(e, start_);
    if (edge.lost) {  // found offline before one of its rounds
      report.edges_lost.push_back(e);
      end = std::max(end, edge.clock);
    } else if (!edge.moved) {  // nothing aggregated: nothing to send
      report.edges_idle.push_back(e);
      end = std::max(end, edge.clock);
    } else if (arrival > deadline_at && arrival < kNever) {
      report.edges_late.push_back(e);
      report.edge_bytes_up += model_bytes_;
      end = std::max(end, deadline_at);
    } else if (lost_at < arrival) {  // it went offline before its model reached the cloud
      report.edges_lost.push_back(e);
      end = std::max(end, lost_at);
    } else {
      report.edges_reported.push_back(e);
      report.edge_bytes_up += model_bytes_;
      report.edge_arrival[e] = arrival;
      end = std::max(end, arrival);
      reporting.push_back(e);
    }
  }
  return end;
}

// The cloud's FedAvg over the reporting edges, weighted by their samples (one edge: its model as
// it is), and each client's share of the step: its edge's weight times its mean share there.
void SyncCloud::average_into(NamedTensors& global, const std::vector<std::uint32_t>& reporting,
                             std::vector<NamedTensors> models, RoundReport& report, CloudStep& step) {
  auto& aggregated = step.aggregated;
  auto& shares = step.shares;
  report.edge_reported_tv = reported_tv(reporting);
  if (reporting.empty()) return;
  double total = 0.0;
  for (auto e : reporting) total += static_cast<double>(edges_[e].samples);
  std::vector<ClientUpdate> updates;
  std::vector<double> weights;
  for (std::size_t k = 0; k < reporting.size(); ++k) {
    const auto e = reporting[k];
    auto& edge = edges_[e];
    const double weight = static_cast<double>(edge.samples) / total;
    report.edge_weight[e] = weight;
    const double rounds = static_cast<double>(edge.rounds_run);
    for (const auto& [c, s] : edge.shares) shares.emplace_back(c, weight * s / rounds);
    aggregated.insert(aggregated.end(), edge.aggregated.begin(), edge.aggregated.end());
    ClientUpdate u;
    u.client_id = e;
    u.num_samples = edge.samples;
    u.weights = std::move(models[k]);
    updates.push_back(std::move(u));
    weights.push_back(weight);
  }
  global = updates.size() == 1 ? std::move(updates.front().weights) : weighted_average(global, updates, weights);
  std::sort(shares.begin(), shares.end());
  std::sort(aggregated.begin(), aggregated.end());
  aggregated.erase(std::unique(aggregated.begin(), aggregated.end()), aggregated.end());
}

}  // namespace

std::unique_ptr<RoundTier> make_sync_cloud(const Scenario& scenario, const Population& population,
                                           const EdgeMembership& membership, std::unique_ptr<EdgeHost> host,
                                           std::unique_ptr<ServerAlgorithm> cloud_half) {
  return std::make_unique<SyncCloud>(scenario, population, membership, std::move(host), std::move(cloud_half));
}

}  // namespace drift
