#pragma once
// What a sync round's clients train from and aggregate into, and what a cloud round is made of
// (docs/architecture.md#round-tiers). The sync driver runs rounds of clients (select, train,
// replay the arrivals in virtual time, accept) and asks its tier for the rest: which rounds run
// next (a wave of them side by side), the task a round's clients download, the aggregation of
// what a round accepted, and the step that closes a cloud round. The tier is chosen once, at
// composition (make_round_tier): a flat federation's is the global model and its server half,
// one round per cloud round (flat_tier.cpp, which knows nothing of edges); under [hierarchy] it
// is a synchronous or a buffered cloud over the edges (engine/sim/edge_tier.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

class Roster;
struct DriverSetup;
class EdgeMembership;

inline constexpr std::uint32_t kNoEdge = 0xffffffffu;

// One round of clients: at which edge (kNoEdge: the global model's), its serial number (what the
// sampler, the straggler draw, the task's seeds and learning rate, and the server half count),
// and when it starts.
struct TierRound {
  std::uint32_t edge = kNoEdge;
  std::uint32_t serial = 0;
  double start = 0.0;
  // The edge the sampler and the straggler draw are told: 0 for the global model's rounds.
  std::uint32_t sampler_edge() const { return edge == kNoEdge ? 0 : edge + 1; }
};

// What a cloud round's close hands the driver: when the round ended, and whose updates its step
// carried, with their shares of it.
struct CloudStep {
  double end = 0.0;
  std::vector<std::uint32_t> aggregated;
  ClientShares shares;
};

// What the driver runs next: a wave of rounds side by side, then (or instead) the cloud's step,
// or the end of the run (`why` empty: it completed; `stopped`: a stop was asked for).
struct TierNext {
  std::vector<TierRound> rounds;
  bool step = false, ended = false, stopped = false;
  std::string why;
};

class RoundTier {
 public:
  using TaskReady = std::function<void(std::shared_ptr<TrainingTask>)>;
  using Aggregated = std::function<void(EdgeAggregated)>;

  virtual ~RoundTier() = default;
  // Cloud round `round` begins at `t` with `global`; `report` is its report (records a buffered
  // cloud carried over from the last step join it). Returns why no round can run again, or "".
  virtual std::string begin(std::uint32_t round, double t, const NamedTensors& global, RoundReport& report) = 0;
  // Once the rounds of the last wave are closed: the next wave, or the cloud's step, or the end.
  // `time_limit`: simulation.max_virtual_time (0: none); `stop_asked`: SIGINT.
  virtual TierNext next(const NamedTensors& global, Roster& roster, double time_limit, bool stop_asked) = 0;
  // The task round `round`'s clients download (from `global` or the edge's model).
  virtual void task(const TierRound& round, std::uint64_t version, const NamedTensors& global, TaskReady ready) = 0;
  // The model a client starts from instead of the task's (ServerAlgorithm::start_model; null: the task's).
  virtual const NamedTensors* start_model(const TierRound& round, std::uint32_t client) const = 0;
  // A round's accepted updates (population ids; none when too few arrived) into its model:
  // `global`, or the edge's. `done` gets the shares in population ids.
  virtual void aggregate(const TierRound& round, NamedTensors& global, std::vector<ClientUpdate> updates,
                         const AggregationInput& input, Aggregated done) = 0;
  // Round `round` ended at `end`, having aggregated `aggregated` (client ids, with `result`):
  // its server half's metrics go into `report` (flat) or to the edge's step.
  virtual void finish(const TierRound& round, double end, const std::vector<std::uint32_t>& aggregated,
                      EdgeAggregated result, RoundReport& report) = 0;
  // The cloud round's step into `global`, its measures into `report`, then `done`.
  virtual void close(NamedTensors& global, RoundReport& report, std::function<void(CloudStep)> done) = 0;
  // `next` once whatever keeps the edges has done all it was asked (a checkpoint reads them then).
  virtual void after_host(std::function<void()> next) = 0;
  // The server half (or halves) and the tier's own state.
  virtual void archive(StateArchive& ar) = 0;
};

// The tier of `setup`'s scenario: flat, or a cloud over the edges whose clients `membership`
// says (the roster's). Takes the setup's algorithm and edge host.
std::unique_ptr<RoundTier> make_round_tier(DriverSetup& setup, const EdgeMembership& membership);

// A flat federation's: `algorithm` over the global model, one round per cloud round.
std::unique_ptr<RoundTier> make_flat_tier(const Scenario& scenario, std::unique_ptr<ServerAlgorithm> algorithm);

}  // namespace drift
