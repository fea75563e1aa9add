// Power-of-choice (Cho et al. 2020): draw d = candidates x count eligible clients in
// proportion to their data size, then keep the `count` with the highest latest training loss.
// A client that has never trained counts as having infinite loss; ties go to the lower id.
#include <cmath>

#include "engine/population/population.hpp"
#include "engine/sampling/samplers.hpp"

namespace drift {

PowerOfChoiceSampler::PowerOfChoiceSampler(const Population& population, std::uint64_t seed, double candidates)
    : SeededSampler(seed),
      population_(population.size()),
      candidates_(candidates),
      alias_(std::vector<double>(population.num_samples.begin(), population.num_samples.end())) {}

std::vector<std::uint32_t> PowerOfChoiceSampler::select(const SelectionContext& ctx) {
  Rng rng = next_call_stream();
  std::vector<std::uint32_t> pool;
  const auto d = static_cast<std::uint32_t>(std::ceil(candidates_ * ctx.count));
  draw_distinct(
      pool, d, population_, rng, [&] { return alias_.draw(rng); }, ctx.eligible);
  auto loss = [&](std::uint32_t c) {
    const double l = ctx.last_loss ? (*ctx.last_loss)[c] : NAN;
    return std::isnan(l) ? INFINITY : l;
  };
  std::sort(pool.begin(), pool.end(),
            [&](std::uint32_t a, std::uint32_t b) { return loss(a) != loss(b) ? loss(a) > loss(b) : a < b; });
  if (pool.size() > ctx.count) pool.resize(ctx.count);
  std::sort(pool.begin(), pool.end());
  return pool;
}

namespace {
struct PowerOfChoiceOptions {
  double candidates = 2.0;  // d as a multiple of the cohort
};
}  // namespace

SamplerInfo power_of_choice_sampler_info() {
  const ParamTable<PowerOfChoiceOptions> params(
      {bind_key<PowerOfChoiceOptions>("candidates", "candidates drawn by size per seat of the cohort",
                                      &PowerOfChoiceOptions::candidates)
           .range(1.0, 1000.0)});
  return sampler_info(
      "power_of_choice", "d = candidates x count drawn by size, keep the highest latest loss (Cho et al.)", params,
      [](const PowerOfChoiceOptions& o, const Scenario& s, const Population& p) {
        return std::make_unique<PowerOfChoiceSampler>(p, s.seed, o.candidates);
      },
      SamplingDesign::none, "sizes and training losses");
}

}  // namespace drift
