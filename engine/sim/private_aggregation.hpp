#pragma once
// DP-FedAvg's mechanism (docs/privacy.md#the-mechanism): each client's change (its model minus
// the model it is compared with) is clipped to L2 norm C over all its floating-point tensors,
// the clipped changes are summed with bounded weights, Gaussian noise of standard deviation z C
// per coordinate is added once (central) or by each client (local), and the sum is divided by
// the expected cohort or the number summed. The server half then sees only the result.
// Every sum runs in float64 in a fixed order, and the noise comes from counter-based streams
// keyed by (seed, aggregation, coordinate), so the numbers never depend on threads or slots.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

class DpMechanism {
 public:
  // `expected_cohort`: the denominator `expected` divides by (m, or q N under Poisson sampling).
  DpMechanism(const PrivacyConfig& config, std::uint64_t seed, double expected_cohort);

  // A sync aggregation: every update's weights become global + (sum of clipped changes + noise) / D,
  // so any averaging server half lands on that model and a server optimiser steps along it.
  // Integer tensors keep the global model's values.
  void privatise(const NamedTensors& global, std::vector<ClientUpdate>& updates, std::uint32_t round);

  // One update at a time: adds weight * (clipped change of `local` from `base`, the model it is
  // compared with as flat_floats gives it, with the client's own noise in local mode) to `sum`
  // (flat float64, made on first use). `weight` must be in [0, 1] for the sensitivity to stay C.
  void accumulate(std::vector<double>& sum, const NamedTensors& local, const std::vector<double>& base, double weight,
                  std::uint32_t client, std::uint32_t round);
  // The change of `local` from `base`, clipped to C (with the client's own noise in local
  // mode), counted in the stats: what a client hands to secure aggregation.
  std::vector<double> clipped_change(const NamedTensors& local, const std::vector<double>& base, std::uint32_t client,
                                     std::uint32_t round);
  // Distributed mode: client's share N(0, (zC)^2 / t) of the noise, t the secure aggregation's
  // threshold, so the t or more inputs of a completed round carry at least the central noise.
  void add_distributed_noise(std::vector<double>& change, std::uint32_t client, std::uint32_t round,
                             std::uint32_t threshold);
  // FedBuff: the central noise on the buffer's sum (nothing in local mode).
  void add_central_noise(std::vector<double>& sum, std::uint32_t round);
  // Ends the aggregation `round` of `summed` updates divided by `denominator`: records its clip
  // and noise in the stats, then moves an adaptive clip for the next aggregation.
  void finish(std::uint32_t summed, double denominator, std::uint32_t round);
  // The standard deviation of the noise on the mean of `summed` updates divided by `denominator`,
  // at the current clip.
  double noise_std_on_mean(std::uint32_t summed, double denominator) const;
  double clip() const { return clip_; }

  struct Stats {
    std::uint32_t clipped = 0;    // updates whose change was longer than C
    std::uint32_t nonfinite = 0;  // updates with a NaN or infinite entry, replaced by no change
    double clip = 0.0;            // the C of the last aggregation finished
    double noise_std = 0.0;       // its noise_std_on_mean
  };
  // What the aggregations since the last call did.
  Stats take_stats();
  double denominator(std::uint32_t summed) const;
  // The current clip (it moves under adaptive clipping), for a checkpoint.
  void archive(StateArchive& ar);

 private:
  double update_multiplier() const;  // z, or what adaptive clipping's count leaves of it
  double count_std() const;

  const PrivacyConfig& config_;
  std::uint64_t seed_;
  double expected_cohort_;
  double clip_;
  std::uint32_t unclipped_ = 0;  // this aggregation's updates within the clip
  std::uint32_t threshold_ = 1;  // distributed: the threshold of the last round's protocol
  Stats stats_;
};

// Why [privacy] cannot run as `s` sets it up, beyond what every aggregation stage needs
// (refused_aggregation_stages), or "".
std::string refused_privacy(const Scenario& s);

// The flat float64 vector of a model's floating-point tensors, in order.
std::vector<double> flat_floats(const NamedTensors& tensors);
// `base` plus `scale * flat` in each floating-point tensor (rounded once to its type); integer
// tensors are copied from `base`.
NamedTensors add_flat(const NamedTensors& base, const std::vector<double>& flat, double scale);

}  // namespace drift
