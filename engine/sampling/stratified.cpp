// Label-stratified selection, a drift-reducing baseline: clients are stratified by dominant
// label and each stratum gets a share of the cohort proportional to its share of the
// population's samples (largest-remainder rounding, ties to the lower stratum). Strata
// short of eligible clients hand their seats to the others.
#include <cmath>

#include "engine/population/population.hpp"
#include "engine/sampling/samplers.hpp"

namespace drift {

StratifiedSampler::StratifiedSampler(const Population& population, std::uint64_t seed)
    : SeededSampler(seed), strata_(dominant_label_strata(population)) {
  double total = 0.0;
  for (const auto& s : strata_) {
    double n = 0.0;
    for (auto c : s) n += static_cast<double>(population.num_samples[c]);
    weights_.push_back(n);
    total += n;
  }
  for (auto& w : weights_) w = total > 0 ? w / total : 0.0;
}

std::vector<std::uint32_t> StratifiedSampler::select(const SelectionContext& ctx) {
  Rng rng = next_call_stream();
  std::vector<std::uint32_t> quota(strata_.size(), 0);
  std::vector<std::pair<double, std::size_t>> remainders;
  std::uint32_t given = 0;
  for (std::size_t s = 0; s < strata_.size(); ++s) {
    const double exact = weights_[s] * ctx.count;
    quota[s] = static_cast<std::uint32_t>(std::floor(exact));
    given += quota[s];
    remainders.emplace_back(-(exact - quota[s]), s);
  }
  std::sort(remainders.begin(), remainders.end());
  for (std::size_t i = 0; given < ctx.count && i < remainders.size(); ++i, ++given) ++quota[remainders[i].second];

  std::vector<std::uint32_t> chosen;
  for (std::size_t s = 0; s < strata_.size(); ++s) draw_distinct_from(chosen, quota[s], strata_[s], rng, ctx.eligible);
  for (std::size_t s = 0; s < strata_.size() && chosen.size() < ctx.count; ++s)
    draw_distinct_from(chosen, ctx.count - static_cast<std::uint32_t>(chosen.size()), strata_[s], rng, ctx.eligible);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

SamplerInfo stratified_sampler_info() {
  return {"stratified", "label-stratified quotas proportional to the population: drift-reducing baseline",
          [](const Scenario& s, const Population& p) { return std::make_unique<StratifiedSampler>(p, s.seed); },
          SamplingDesign::none, "labels"};
}

}  // namespace drift
