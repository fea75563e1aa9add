// Without replacement, each draw proportional to the client's number of samples.
#include "engine/population/population.hpp"
#include "engine/sampling/samplers.hpp"

namespace drift {

SizeWeightedSampler::SizeWeightedSampler(const Population& population, std::uint64_t seed)
    : SeededSampler(seed),
      population_(population.size()),
      alias_(std::vector<double>(population.num_samples.begin(), population.num_samples.end())) {}

std::vector<std::uint32_t> SizeWeightedSampler::select(const SelectionContext& ctx) {
  Rng rng = next_call_stream();
  std::vector<std::uint32_t> chosen;
  draw_distinct(
      chosen, ctx.count, population_, rng, [&] { return alias_.draw(rng); }, ctx.eligible);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

SamplerInfo size_weighted_sampler_info() {
  return {"size_weighted", "without replacement, proportional to data size",
          [](const Scenario& s, const Population& p) { return std::make_unique<SizeWeightedSampler>(p, s.seed); },
          SamplingDesign::none, "sizes"};
}

}  // namespace drift
