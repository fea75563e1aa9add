#pragma once
// The edge tier of a hierarchical federation ([hierarchy], docs/hierarchy.md), as the sync
// driver runs it. A cloud round at virtual time T: the cloud samples online edges and sends
// each the global model; each edge runs hierarchy.edge_rounds sync rounds of its own clients
// with a server half of its own (the driver runs every edge's k-th round side by side, each in
// its own virtual clock: a wave); then the cloud averages the models of the edges that
// reported, weighted by the samples their clients hold. A flat federation is one edge round per cloud round, on the
// global model, with no cloud step: the same code path, so a flat run is what it always was.
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

namespace drift {

class Roster;

inline constexpr std::uint32_t kFlatEdge = 0xffffffffu;

// One edge round: which edge (kFlatEdge in a flat federation), its serial number (what the
// sampler, the straggler draw, the task's seeds and learning rate, and the server half count:
// (cloud round - 1) x edge_rounds + k), and when it starts.
struct EdgeRound {
  std::uint32_t edge = kFlatEdge;
  std::uint32_t serial = 0;
  double start = 0.0;
};

// What a cloud round's close hands the driver: when the round ended, and whose updates the
// cloud's step carried, with their shares of it.
struct CloudStep {
  double end = 0.0;
  std::vector<std::uint32_t> aggregated;
  ClientShares shares;
};

class EdgeTier {
 public:
  // `host` keeps the edges' server halves and models (null in a flat federation). `membership`:
  // the clients' edges as the timeline's moves leave them (the roster's), read at every cloud
  // round's start.
  EdgeTier(const Scenario& scenario, const Population& population, const EdgeMembership& membership, EdgeHost* host);

  bool hierarchical() const { return !edges_.empty(); }
  // hierarchy.cloud = "fedbuff" (docs/hierarchy.md#asynchronous-edges-the-buffered-cloud): each
  // edge pulls the global model when it is free, runs its edge rounds and sends its model; the
  // cloud steps every hierarchy.buffer models. A "cloud round" is then one such step.
  bool buffered() const { return buffered_; }
  // Synchronous cloud: the cloud round begun last has no edge, and none will ever come online
  // again (each is out for good: an outage without an end, a model that never brings it back).
  bool edges_gone() const { return edges_gone_; }
  // Cloud round `round` begins at `t` with the global model (`model_bytes` of it travel to each edge).
  void begin(std::uint32_t round, double t, const NamedTensors& global, std::uint64_t model_bytes);
  // fedbuff: what comes next once the cloud's events before it are applied: the running edges'
  // next rounds (a wave), the cloud's step (the buffer is full), or the end of the run (`why`
  // empty: it completed; `time_limit` > 0: simulation.max_virtual_time).
  struct LoopWave {
    std::vector<EdgeRound> rounds;
    bool step = false, ended = false;
    bool stopped = false;  // ended because a stop was asked for and no step came (`why` says so)
    std::string why;
  };
  // `stop_asked`: a person asked the run to stop at its next step (SIGINT); once every edge has
  // ended two loops since without one, the run stops without it.
  LoopWave next_loop_wave(const NamedTensors& global, Roster& roster, double time_limit, bool stop_asked = false);
  // The next wave of this cloud round: the k-th edge round of every edge still running, in edge
  // order (a flat round's one round); empty when all have run. An edge found offline when its
  // next round would start stops there and is lost.
  std::vector<EdgeRound> next_wave();
  // An edge's server half knows its clients by their place among the edge's clients (0 to its
  // size - 1), so per-client tables and divisors by N are the edge's own: updates go in with local
  // ids and come back, with the shares, with the population's. No-ops in a flat federation.
  void localise(const EdgeRound& round, std::vector<ClientUpdate>& updates) const;
  void globalise(const EdgeRound& round, std::vector<ClientUpdate>& updates, ClientShares& shares) const;
  // What edge round `round`'s server half reported (`metrics`), having aggregated `aggregated`
  // (client ids, in the order of its per-client lists): a flat round's goes into `report` as it
  // is; an edge's is kept for the step its model goes into (engine/sim/edge_metrics.hpp).
  void record_metrics(const EdgeRound& round, AlgorithmMetrics metrics, const std::vector<std::uint32_t>& aggregated,
                      RoundReport& report);
  // Edge round `round` ended at `end`, having aggregated `aggregated` (client ids) with `shares`
  // (or moved its model without updates, `moved`).
  void finish(const EdgeRound& round, double end, const std::vector<std::uint32_t>& aggregated, ClientShares shares,
              bool moved);
  // The cloud's step: the reporting edges' models (asked of the host) averaged into `global`,
  // the edges' measures written into `report`, then `done` with when the cloud round ended and
  // the clients aggregated this cloud round with their shares of the global step. Flat: the one
  // round's clients and end, at once.
  void close(NamedTensors& global, RoundReport& report, std::function<void(CloudStep)> done);
  // `next` once every model a buffered cloud's edges send has come from the host (at once
  // without a buffered cloud): the step waits for them. One wait at a time.
  void after_models(std::function<void()> next);
  // `next` once the host has done all it was asked (at once in a flat federation): a checkpoint
  // reads the edges' state then.
  void after_host(std::function<void()> next);
  // The edges' server halves (their models start from the global one every cloud round).
  void archive(StateArchive& ar);

 private:
  // fedbuff: applies the cloud's events in time order (models arriving, then edges pulling
  // `global`; at one instant, pulls first), as far as no running edge could still send a model
  // before them. True when the buffer is full: close() takes the step. `roster` says when an
  // idle edge's clients are next free.
  bool advance(const NamedTensors& global, Roster& roster);
  // fedbuff: the time of the next event waiting (kNever: none; the run cannot go on unless an
  // edge is running).
  double next_event() const;
  // fedbuff: "2 models in the buffer, 3 late, 1 loop lost, 0 idle" since the last cloud step.
  std::string since_last_step() const;
  // fedbuff: why the run ends (hierarchy.stall_loops), or "" while it goes on.
  std::size_t loops_without_step() const;  // late, lost or idle since the last step
  std::string stalled() const;
  // Why the run stops when asked to and no step came in 2 loops per edge since; "" before.
  std::string stop_unanswered(bool stop_asked);
  // The cloud's view of an edge (its server half and model are the host's).
  struct Edge {
    std::uint64_t samples = 0;         // its clients' samples: its weight at the cloud
    std::vector<double> label_counts;  // its clients' labels (empty without histograms)
    std::vector<double> labels;        // ... normalised
    double clock = 0.0;                // when its next edge round starts, then when it ended
    double began = 0.0;                // when the global model reached it this cloud round
    std::uint32_t rounds_run = 0;      // this cloud round
    bool sampled = false, lost = false, moved = false;
    bool stopped = false;                   // keep_work: it went offline between its rounds and keeps its model
    std::vector<std::uint32_t> aggregated;  // this cloud round, with repeats
    ClientShares shares;                    // summed over this cloud round's edge rounds
    EdgeMetrics metrics;                    // what its server half reported this cloud round (loop)
    // fedbuff: where the edge is in its loop (pull, edge rounds, send), when it pulls next or
    // last pulled (kNever: after the next cloud step; every edge first pulls at 0), and what it
    // pulled, with the cloud steps taken by then.
    enum class Phase : std::uint8_t { waiting, running, sending } phase = Phase::waiting;
    double pull_at = 0.0;
    BufferedEdge sent;  // sending: its model, arriving at sent.arrival
    NamedTensors pulled;
    std::uint64_t pulled_version = 0;
    std::uint32_t loops = 0;  // loops begun: its edge rounds' serials count on from them
    // hierarchy.concurrency: a pull waiting for a free slot (due at pull_at), and a loop that
    // ended, holding its slot until `slot_until` (slot_pending).
    bool queued = false;
    double slot_until = 0.0;
    bool slot_pending = false;
  };
  // fedbuff
  void begin_loop(std::uint32_t e, double t, const NamedTensors& global);
  void ask_model(std::uint32_t e, std::uint64_t request);
  void settle(Roster& roster);
  void end_loop(std::uint32_t e, Roster& roster);
  double horizon() const;
  std::uint32_t holding(double t) const;
  void wake_queued(double t, const NamedTensors& global);
  CloudStep close_buffered(NamedTensors& global, RoundReport& report);
  void archive_buffered_state(StateArchive& ar);
  void regroup();
  double participation_bias() const;
  double link_seconds(std::uint32_t edge, bool up) const;
  void size_edge_fields(RoundReport& report) const;
  double reported_tv(const std::vector<std::uint32_t>& reporting) const;
  double cohort_tv(std::uint32_t edge, const std::vector<std::uint32_t>& aggregated) const;
  std::vector<std::uint32_t> sample_edges(std::uint32_t round, double t);
  void add_shares(Edge& e, const ClientShares& shares) const;
  double close_edges(RoundReport& report, std::vector<std::uint32_t>& reporting);
  void average_into(NamedTensors& global, const std::vector<std::uint32_t>& reporting, std::vector<NamedTensors> models,
                    RoundReport& report, CloudStep& step);

  const Scenario& scenario_;
  const Population& population_;
  const EdgeMembership& membership_;
  EdgeHost* host_ = nullptr;
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
  std::vector<std::uint32_t> order_;  // this cloud round's sampled edges, ascending
  // fedbuff: the buffer and what happened since the last cloud step (round_ - 1 steps so far).
  bool buffered_ = false;
  bool edges_gone_ = false;
  std::uint32_t concurrency_ = 0;  // edges at work at once; 0 = every edge
  std::vector<BufferedEdge> buffer_;
  std::uint64_t model_requests_ = 0;  // models asked of the host so far
  std::uint32_t models_pending_ = 0;  // ... not here yet
  std::function<void()> when_models_here_;
  double cloud_now_ = 0.0;  // the latest event applied
  std::vector<std::uint32_t> since_lost_, since_idle_, since_late_;
  std::optional<std::size_t> loops_when_stop_asked_;  // loops ended without a step when it was
  std::uint64_t since_bytes_up_ = 0, since_bytes_down_ = 0;
  // Flat: the one edge round of the cloud round.
  bool flat_pending_ = false;
  double flat_end_ = 0.0;
  std::vector<std::uint32_t> flat_aggregated_;
  ClientShares flat_shares_;
};

}  // namespace drift
