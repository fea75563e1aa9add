// Controlled sampling drift: round r draws its cohort from stratum (r - 1) mod S only, where
// the strata are the scenario's groups or the clients' dominant labels (sampler.strata).
// A stratum with too few eligible clients gives a smaller cohort; nothing is borrowed.
#include "engine/population/population.hpp"
#include "engine/sampling/samplers.hpp"

namespace drift {

CyclicSampler::CyclicSampler(const Population& population, std::uint64_t seed, CyclicStrata strata)
    : SeededSampler(seed), strata_(strata_of(population, strata)) {}

std::vector<std::uint32_t> CyclicSampler::select(const SelectionContext& ctx) {
  Rng rng = next_call_stream();
  std::vector<std::uint32_t> chosen;
  if (strata_.empty()) return chosen;
  const auto& stratum = strata_[(ctx.round == 0 ? 0 : ctx.round - 1) % strata_.size()];
  draw_distinct_from(chosen, ctx.count, stratum, rng, ctx.eligible);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

namespace {
struct CyclicOptions {
  CyclicStrata strata = CyclicStrata::automatic;
};
}  // namespace

SamplerInfo cyclic_sampler_info() {
  const ParamTable<CyclicOptions> params({bind_key<CyclicOptions>(
      "strata", "rotate through groups, or labels (dominant label); auto: groups if any are defined",
      &CyclicOptions::strata)});
  return sampler_info(
      "cyclic", "rotates through groups (or dominant labels): controlled sampling drift", params,
      [](const CyclicOptions& o, const Scenario& s, const Population& p) {
        return std::make_unique<CyclicSampler>(p, s.seed, o.strata);
      },
      SamplingDesign::none, "labels (or the groups they define)");
}

}  // namespace drift
