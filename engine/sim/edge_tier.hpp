#pragma once
// The edge tiers of a hierarchical federation ([hierarchy], docs/hierarchy.md): the round tiers
// (engine/sim/round_tier.hpp) whose rounds are the edges'. A synchronous cloud round at virtual
// time T (sync_cloud.cpp): the cloud samples online edges and sends each the global model; each
// edge runs hierarchy.edge_rounds sync rounds of its own clients with a server half of its own
// (the driver runs every edge's k-th round side by side, each in its own virtual clock: a wave);
// then the cloud averages the models of the edges that reported, weighted by the samples their
// clients hold. A buffered cloud (buffered_cloud.hpp) lets each edge loop on its own clock
// and steps every hierarchy.buffer models. What both share is here: the edges, their server
// halves and models behind the EdgeHost, and the measures of the edges' rounds.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/population/edge_membership.hpp"
#include "engine/population/edge_presence.hpp"
#include "engine/population/population.hpp"
#include "engine/sim/drift_metrics.hpp"
#include "engine/sim/edge_buffer.hpp"
#include "engine/sim/edge_host.hpp"
#include "engine/sim/round_tier.hpp"

namespace drift {

class EdgeTier : public RoundTier {
 public:
  // `host` keeps the edges' server halves and models. `membership`: the clients' edges as the
  // timeline's moves leave them (the roster's), read at every cloud round's start.
  // `cloud_half`: the scenario's server half, which a checkpoint keeps (the cloud averages).
  EdgeTier(const Scenario& scenario, const Population& population, const EdgeMembership& membership,
           std::unique_ptr<EdgeHost> host, std::unique_ptr<ServerAlgorithm> cloud_half);

  void task(const TierRound& round, std::uint64_t version, const NamedTensors& global, TaskReady ready) override;
  const NamedTensors* start_model(const TierRound& round, std::uint32_t client) const override;
  // An edge's server half knows its clients by their place among the edge's clients (0 to its
  // size - 1), so per-client tables and divisors by N are the edge's own: updates go in with
  // local ids and the shares come back with the population's.
  void aggregate(const TierRound& round, NamedTensors& global, std::vector<ClientUpdate> updates,
                 const AggregationInput& input, Aggregated done) override;
  // The server half's metrics are kept for the step the edge's model goes into (edge_metrics.hpp).
  void finish(const TierRound& round, double end, const std::vector<std::uint32_t>& aggregated, EdgeAggregated result,
              RoundReport& report) override;
  void after_host(std::function<void()> next) override;
  void archive(StateArchive& ar) final;

 protected:
  // The cloud's view of an edge (its server half and model are the host's).
  struct Edge {
    std::uint64_t samples = 0;         // its clients' samples: its weight at the cloud
    std::vector<double> label_counts;  // its clients' labels (empty without histograms)
    std::vector<double> labels;        // ... normalised
    double clock = 0.0;                // when its next edge round starts, then when it ended
    double began = 0.0;                // when the global model reached it this cloud round
    std::uint32_t rounds_run = 0;      // this cloud round
    bool lost = false, moved = false;
    bool stopped = false;                   // keep_work: it went offline between its rounds and keeps its model
    std::vector<std::uint32_t> aggregated;  // this cloud round, with repeats
    ClientShares shares;                    // summed over this cloud round's edge rounds
    EdgeMetrics metrics;                    // what its server half reported this cloud round (loop)
  };
  // Cloud round `round` begins at `t` with `global`: the edges' sizes follow the timeline's moves.
  void begin_cloud_round(std::uint32_t round, double t, const NamedTensors& global);
  // Edge e's next round in `wave`, if it runs one (its loop's `loop`-th): not while lost,
  // stopped or done, and not when it is offline at its clock (then its work is lost, or kept).
  void add_round(std::uint32_t e, std::uint32_t loop, std::vector<TierRound>& wave);
  // The cloud's own state in a checkpoint, after the edges' server halves.
  virtual void archive_cloud(StateArchive& ar) {}
  // `next` once every model the host was asked for is here.
  virtual void after_models(std::function<void()> next) { next(); }
  void regroup();
  double participation_bias() const;
  double link_seconds(std::uint32_t edge, bool up) const;
  void size_edge_fields(RoundReport& report, bool staleness) const;
  double reported_tv(const std::vector<std::uint32_t>& reporting) const;
  double cohort_tv(std::uint32_t edge, const std::vector<std::uint32_t>& aggregated) const;
  void add_shares(Edge& e, const ClientShares& shares) const;

  const Scenario& scenario_;
  const Population& population_;
  const EdgeMembership& membership_;
  std::unique_ptr<EdgeHost> host_;
  std::unique_ptr<ServerAlgorithm> cloud_half_;
  std::uint64_t membership_seen_ = 0;                     // membership_.changes() when the edges' sizes were taken
  std::vector<std::vector<std::uint32_t>> members_seen_;  // each edge's clients then
  bool moves_ = false;                                    // the timeline moves clients: reports say the edges' sizes
  std::vector<Edge> edges_;
  std::vector<double> sample_shares_;  // each edge's clients' samples over the population's
  DriftWindow weights_;                // the cloud weights of the last drift_window cloud rounds
  EdgePresence presence_;
  std::uint32_t round_ = 0;
  double start_ = 0.0;
  std::uint64_t model_bytes_ = 0;
};

// The clouds over the edges: synchronous (hierarchy.cloud = "sync") and buffered ("fedbuff").
std::unique_ptr<RoundTier> make_sync_cloud(const Scenario& scenario, const Population& population,
                                           const EdgeMembership& membership, std::unique_ptr<EdgeHost> host,
                                           std::unique_ptr<ServerAlgorithm> cloud_half);
std::unique_ptr<RoundTier> make_buffered_cloud(const Scenario& scenario, const Population& population,
                                               const EdgeMembership& membership, std::unique_ptr<EdgeHost> host,
                                               std::unique_ptr<ServerAlgorithm> cloud_half);

}  // namespace drift
