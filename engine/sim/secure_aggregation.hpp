#pragma once
// Secure aggregation of a sync round in virtual time (docs/privacy.md#secure-aggregation).
// After training, the round's accepted clients run SecAgg or SecAgg+: each stage is charged to
// the clock by the cost model (two latencies, the stage's bits at each client's bandwidths, its
// computation), a client stops in a stage when it goes offline (the scenario's availability) or
// by secure_aggregation.dropout, and the round aborts when too few are left to rebuild the
// masks. Otherwise the server sees only the decoded integer sum of U3's inputs, which replaces
// every update (with [privacy], of the clipped changes, noised after decoding).
#include <cstdint>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/population/population.hpp"
#include "engine/privacy/secagg_protocol.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

class DpMechanism;
class Roster;

class SecureAggregator {
 public:
  SecureAggregator(const Scenario& scenario, const Population& population);

  // Runs the protocol from virtual time `start` over `updates` (client-id order) and fills the
  // report's sa_* fields. Returns false when the round aborts (nothing is released); else
  // `updates` keeps the members of U3, each now carrying the decoded model, and the samples of
  // the others count as discarded. `end` becomes the
  // protocol's end. With `dp`, clients clip (and, locally, noise) before encoding, and the
  // central noise is added to the decoded sum.
  bool run(std::uint32_t round, double start, const NamedTensors& global, std::vector<ClientUpdate>& updates,
           Roster& roster, DpMechanism* dp, RoundReport& report, double& end);

 private:
  struct Inputs;
  // The stages in virtual time for a model of `parameters` floats; `end` becomes their end.
  privacy::SecAggSession run_stages(std::uint32_t round, double start, const std::vector<ClientUpdate>& updates,
                                    std::uint64_t parameters, Roster& roster, RoundReport& report, double& end) const;
  // The inputs of U3 as integers, summed and decoded: the weighted mean of the inputs, or
  // with DP the sum of the clipped changes.
  std::vector<double> sum_inputs(std::uint32_t round, const Inputs& in, RoundReport& report) const;
  std::vector<double> flower_sum(std::uint32_t round, const Inputs& in, RoundReport& report) const;
  std::vector<double> fixed_point_sum(const Inputs& in, RoundReport& report) const;
  // simulate_masks: masked inputs summed and unmasked equal the plain modular sum, or throw.
  void check_masks(std::uint32_t round, const Inputs& in, const std::vector<std::vector<std::uint64_t>>& encoded,
                   const std::vector<std::uint64_t>& plain) const;

  const Scenario& scenario_;
  const Population& population_;
  double max_weight_;  // W: the largest sample count a client weight can have
};

// Why secure aggregation cannot run as `s` sets it up, beyond what every aggregation stage
// needs (refused_aggregation_stages), or "".
std::string refused_secure_aggregation(const Scenario& s);

}  // namespace drift
