// Uniform without replacement over the eligible clients, blind to whether they are online:
// an offline client that is selected cannot train (what a server that does not track
// availability gets).
#include "engine/population/population.hpp"
#include "engine/sampling/samplers.hpp"

namespace drift {

std::vector<std::uint32_t> UniformSampler::select(const SelectionContext& ctx) {
  Rng rng = next_call_stream();
  std::vector<std::uint32_t> chosen;
  draw_distinct(
      chosen, ctx.count, population_, rng, [&] { return static_cast<std::uint32_t>(rng.below(population_)); },
      ctx.eligible);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

SamplerInfo uniform_sampler_info() {
  return {"uniform", "uniform without replacement, blind to availability (offline picks cannot train)",
          [](const Scenario& s, const Population& p) { return std::make_unique<UniformSampler>(p.size(), s.seed); },
          SamplingDesign::fixed_size, ""};
}

}  // namespace drift
