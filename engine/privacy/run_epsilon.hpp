#pragma once
// The epsilon of one run's releases, as far as the run's world lets each figure hold
// (docs/privacy.md#what-a-run-reports):
//  - amplified: the sampling design's figure (Poisson at rate q, or fixed-size cohorts of a
//    fraction q without replacement), composed over the releases;
//  - realised: one client's figure from the releases it actually took part in, no
//    amplification;
//  - every release: the realised figure of a client that took part in all of them, the sound
//    bound when participation itself depends on the clients' data.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/privacy/accountant.hpp"

namespace drift::privacy {

struct RunPrivacy {
  double noise_multiplier = 1.0;  // z = sigma / C
  bool local = false;             // each client adds its own noise: a report's sensitivity is 2C
  Sampling design = Sampling::None;
  double rate = 1.0;                           // q of the design
  bool amplification_valid = false;            // the design's assumptions hold in this run
  bool participation_data_independent = true;  // who takes part does not depend on their data
  bool replace_one = false;                    // the sum is divided by its own count: neighbours replace
  double delta = 1e-5;
  std::string why_not_amplified;  // empty when valid
};

// Which figure is the run's guarantee.
enum class Headline { Amplified, Realised, EveryRelease };

class RunEpsilon {
 public:
  explicit RunEpsilon(RunPrivacy privacy, AccountantOptions options = {});
  // The design's figure after `releases` (NaN when there is none).
  double amplified(std::uint64_t releases) const;
  // A client's figure after taking part in `participations` releases, without amplification.
  double realised(std::uint64_t participations) const;
  Headline headline() const;
  // The guarantee after `releases`, the busiest client having taken part in `max_participations`.
  double guarantee(std::uint64_t releases, std::uint64_t max_participations) const;
  // One sentence: which figure is the guarantee and why.
  std::string assumption() const;
  const RunPrivacy& privacy() const { return privacy_; }

 private:
  double epsilon_of(const std::vector<double>& per_release, std::uint64_t count) const;

  RunPrivacy privacy_;
  AccountantOptions options_;
  std::vector<double> amplified_release_;  // RDP of one release under the design; empty: none
  std::vector<double> realised_release_;   // RDP of one participation, no amplification
};

}  // namespace drift::privacy
