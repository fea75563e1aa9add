// Uniform over the clients that are eligible and online now (a server that only picks
// among clients that checked in).
#include "engine/population/population.hpp"
#include "engine/sampling/samplers.hpp"

namespace drift {

std::vector<std::uint32_t> AvailabilityAwareSampler::select(const SelectionContext& ctx) {
  Rng rng = next_call_stream();
  std::vector<std::uint32_t> chosen;
  draw_distinct(
      chosen, ctx.count, population_, rng, [&] { return static_cast<std::uint32_t>(rng.below(population_)); },
      [&](std::uint32_t c) { return ctx.eligible(c) && ctx.online(c); });
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

SamplerInfo availability_aware_sampler_info() {
  return {"availability_aware", "uniform over the clients online at selection time",
          [](const Scenario& s, const Population& p) {
            return std::make_unique<AvailabilityAwareSampler>(p.size(), s.seed);
          },
          SamplingDesign::none, ""};
}

}  // namespace drift
