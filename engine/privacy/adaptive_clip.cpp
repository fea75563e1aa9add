#include "engine/privacy/adaptive_clip.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace drift::privacy {

double update_noise_multiplier(double z, double count_std) {
  if (!(z < 2 * count_std))
    throw std::invalid_argument("the noise multiplier " + std::to_string(z) + " must be below twice the count noise " +
                                std::to_string(count_std) + " for the count to take only part of the budget");
  return 1.0 / std::sqrt(1.0 / (z * z) - 1.0 / (4 * count_std * count_std));
}

double next_clip(double clip, std::uint32_t unclipped, std::uint32_t summed, double count_noise, double expected,
                 double quantile, double lr) {
  const double centred = static_cast<double>(unclipped) - 0.5 * static_cast<double>(summed) + count_noise;
  const double fraction = std::clamp(centred / expected + 0.5, 0.0, 1.0);
  return clip * std::exp(-lr * (fraction - quantile));
}

}  // namespace drift::privacy
