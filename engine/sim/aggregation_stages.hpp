#pragma once
// What an aggregation's updates pass through between the clients and the server half, composed
// once from the scenario: secure aggregation's protocol (which may shrink a sync cohort, or
// abort the round) and differential privacy's clipping and noise (inside the protocol when both
// run), then the privacy ledger's entry. A sync round hands the stages its accepted updates at
// once; FedBuff's buffer hands them one update at a time as it arrives, and the step at the end.
// A scenario without them has stages that pass everything through, so no driver has a branch
// for either.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/sim/private_aggregation.hpp"
#include "engine/sim/secure_aggregation.hpp"

namespace drift {

class PrivacyBook;
struct AlgorithmInfo;

// Why the stages `s` turns on cannot run with `algorithm` ("" when they can): what every stage
// between the clients and the server half needs (one shared model whose server half reads only
// the updates' weights, and no raw update measured beside them), then each stage's own
// (refused_privacy, refused_secure_aggregation). Each reason names its stage's key.
std::string refused_aggregation_stages(const Scenario& s, const AlgorithmInfo& algorithm);

class AggregationStages {
 public:
  // `privacy`: the run's ledger ([privacy] runs only, else null).
  AggregationStages(const Scenario& scenario, const Population& population, PrivacyBook* privacy);

  // Secure aggregation over `accepted` (client-id order) from virtual time `start`: false when
  // it aborts; else `accepted` keeps its survivors and `end` becomes the protocol's end. True
  // without secure aggregation.
  bool secure(std::uint32_t round, double start, const NamedTensors& global, std::vector<ClientUpdate>& accepted,
              Roster& roster, RoundReport& report, double& end);

  // Clipping and noise on what the server half will see (secure aggregation did it inside its
  // protocol, when it runs).
  void privatise(const NamedTensors& global, std::vector<ClientUpdate>& accepted, std::uint32_t round);

  // The aggregation's entry in the privacy ledger (`released`: it summed updates into a new model).
  void record(RoundReport& report, const std::vector<std::uint32_t>& aggregated, bool released);
  // ... with the figures `dp` its release returned (FedBuff: the next buffer may have begun since).
  void record(RoundReport& report, const std::vector<std::uint32_t>& aggregated, bool released,
              const DpMechanism::Stats& dp);

  // Whether FedBuff's buffer hands its updates to buffer() (clipping and noise run), or sums
  // the plain changes itself.
  bool buffers() const { return dp_.has_value(); }
  // FedBuff's buffer, one update at a time: `weight` x the clipped change of `update` from
  // `pulled` (the model its client started from) joins the buffer's sum.
  void buffer(const ClientUpdate& update, const NamedTensors& pulled, double weight, std::uint32_t round);
  // FedBuff's step over the `count` updates buffer() took: `global` plus server_lr x (their sum
  // with the central noise) / D, and the aggregation's clipping and noise figures.
  std::pair<NamedTensors, DpMechanism::Stats> release_buffer(const NamedTensors& global, std::uint32_t count,
                                                             double server_lr, std::uint32_t round);

  void archive(StateArchive& ar);
  // FedBuff: the buffer's sum and the clip, where the buffer keeps its own state.
  void archive_buffer(StateArchive& ar);

 private:
  PrivacyBook* privacy_;
  std::optional<DpMechanism> dp_;           // [privacy]: clipping and noise before the server half
  std::optional<SecureAggregator> secagg_;  // [secure_aggregation]: the protocol over the accepted
  std::vector<double> buffer_sum_;          // FedBuff with DP: the clipped changes so far, flat, float64
};

}  // namespace drift
