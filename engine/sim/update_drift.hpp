#pragma once
// Sampling drift in parameter space: how far the cohort's aggregate update is from the update
// the whole population would have made from the same model. The population's is estimated
// from the cohort's updates plus those of a seeded uniform sample of the clients that were not
// selected ("shadow" clients, trained from the same task and never aggregated), each shadow
// update weighted up to stand for all the clients not selected. This is the quantity FedSKC's
// GPR claims to correct (docs/outputs.md#metrics).
#include <cstdint>
#include <vector>

#include "engine/tensors/federated_types.hpp"

namespace drift {

struct UpdateDrift {
  double relative_l2 = 0.0;  // ||D_cohort - D_population|| / ||D_population||
  double cosine = 0.0;       // cosine of the angle between them
};

// D_k = w_k - global over every floating-point tensor. D_cohort is the sample-weighted mean of
// the cohort's D_k; D_population is
//   (sum_C n_k D_k + r sum_S n_k D_k) / (sum_C n_k + r sum_S n_k),  r = not_selected / |S|.
// NaN values when either aggregate is empty or zero.
UpdateDrift update_drift(const NamedTensors& global, const std::vector<const ClientUpdate*>& cohort,
                         const std::vector<const ClientUpdate*>& shadow, std::uint64_t not_selected);

}  // namespace drift
