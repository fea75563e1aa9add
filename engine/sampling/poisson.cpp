// Poisson sampling over the population: client c joins with probability q, independently of
// every other client and round. Gaps between members are geometric, so a round draws
// O(q N) numbers instead of N. An ineligible member (not present, or busy) is left out: the
// draw itself never looks at anything but the rate, which is what amplification needs.
#include <cmath>

#include "engine/population/population.hpp"
#include "engine/sampling/samplers.hpp"

namespace drift {

std::vector<std::uint32_t> PoissonSampler::select(const SelectionContext& ctx) {
  Rng rng = next_call_stream();
  std::vector<std::uint32_t> chosen;
  if (rate_ <= 0) return chosen;
  const double log_keep = std::log1p(-rate_);  // -inf at rate 1: every gap is 0
  double next = -1;
  for (;;) {
    const double gap = rate_ >= 1 ? 0.0 : std::floor(std::log(rng.uniform_open()) / log_keep);
    next += gap + 1;
    if (next >= population_) break;
    const auto c = static_cast<std::uint32_t>(next);
    if (ctx.eligible(c)) chosen.push_back(c);
  }
  return chosen;
}

SamplerInfo poisson_sampler_info() {
  return {"poisson", "each client independently with probability fraction (cohort size varies): DP's amplification",
          [](const Scenario& s, const Population& p) {
            return std::make_unique<PoissonSampler>(p.size(), poisson_rate(s), s.seed);
          },
          SamplingDesign::poisson, ""};
}

}  // namespace drift
