#pragma once
// Adaptive clipping to a quantile of the update norms (Andrew et al. 2021, as TF-Privacy's
// QuantileAdaptiveClipSumQuery does it; docs/privacy.md#adaptive-clipping).
#include <cstdint>

namespace drift::privacy {

// The noise multiplier left for the update sum when a noisy count of standard deviation
// `count_std` shares the budget of multiplier z: (z^-2 - (2 count_std)^-2)^-1/2. Throws
// std::invalid_argument unless z < 2 count_std.
double update_noise_multiplier(double z, double count_std);

// The next clip from this aggregation's: of `summed` updates, `unclipped` had a norm at most
// `clip`; the centred count sum(b_i - 1/2) + `count_noise` over `expected` (the expected cohort)
// plus 1/2, clamped to [0, 1], estimates the unclipped fraction, and the clip moves
// geometrically toward the `quantile`: clip exp(-lr (fraction - quantile)).
double next_clip(double clip, std::uint32_t unclipped, std::uint32_t summed, double count_noise, double expected,
                 double quantile, double lr);

}  // namespace drift::privacy
