#pragma once
// A private run's ledger (docs/privacy.md#what-a-run-reports): which sampling design its releases
// follow and whether this run's world lets amplification count, how many aggregations each client
// took part in, and the epsilon after every aggregation.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/privacy/run_epsilon.hpp"

namespace drift {

// What the scenario's sampler, availability and groups let the accountant assume.
privacy::RunPrivacy assess_privacy(const Scenario& s);
// The denominator `expected` divides by: q N under Poisson sampling, else the cohort (the
// buffer under FedBuff).
double expected_cohort(const Scenario& s);

class PrivacyBook {
 public:
  explicit PrivacyBook(const Scenario& s);
  // After an aggregation (`released`: it summed updates into a new model; an aggregation of
  // nobody releases nothing): the clients it summed, the mechanism's clipped count, clip and noise.
  void record(RoundReport& r, const std::vector<std::uint32_t>& aggregated, bool released, std::uint32_t clipped,
              double clip, double noise_std);
  // Non-empty (the reason) when one more release could take the guarantee past
  // privacy.target_epsilon.
  std::string budget_spent() const;
  void archive(StateArchive& ar);
  const privacy::RunEpsilon& epsilon() const { return epsilon_; }

 private:
  double target_;
  privacy::RunEpsilon epsilon_;
  std::vector<std::uint32_t> participations_;
  std::uint64_t releases_ = 0;
  std::uint64_t most_participations_ = 0;
};

}  // namespace drift
