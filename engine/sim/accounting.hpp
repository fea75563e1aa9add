#pragma once
// What a round report counts about participation: who was eligible, who took part so far
// (coverage), how far the aggregated cohort's labels drift from the population's and from the
// previous cohort's, and the
// aggregated updates' training metrics.
#include <cstdint>
#include <vector>

#include "engine/metrics/round_report.hpp"
#include "engine/sim/drift_metrics.hpp"
#include "engine/sim/roster.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

class Accounting {
 public:
  Accounting(const Scenario& scenario, const Population& population, bool log_eligible);

  // Fills participation, drift, coverage and the participation bias for the clients of an
  // aggregation; `shares`: the server half's (ServerAlgorithm::shares), empty when it moved nothing.
  // Where a per-client evaluation is due, also every client's participations so far.
  void account(RoundReport& report, const std::vector<std::uint32_t>& aggregated, ClientShares shares);
  // The online and eligible counts and one "eligible" row per eligible client (O(population)),
  // if logged.
  void record_eligible(RoundReport& report, double t, Roster& roster) const;
  // Only the online count (async aggregations, which have no selection instant), if logged.
  void record_online(RoundReport& report, double t, Roster& roster) const;
  // Sample count and sample-weighted training loss and accuracy of the aggregated updates.
  static void add_training_metrics(RoundReport& report, const std::vector<ClientUpdate>& updates);
  void archive(StateArchive& ar);

 private:
  const Scenario& scenario_;
  const Population& population_;
  bool log_eligible_;
  std::vector<std::uint32_t> participation_;  // aggregations each client took part in
  std::uint64_t participants_ = 0;            // clients aggregated at least once
  DriftWindow window_;
  ParticipationBias bias_;
  std::vector<double> previous_cohort_;  // label distribution of the last non-empty aggregation
};

}  // namespace drift
