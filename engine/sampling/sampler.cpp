#include "engine/sampling/sampler.hpp"

#include <algorithm>
#include <numeric>

#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"

namespace drift {

const std::vector<SamplerInfo>& sampler_catalog() {
  static const std::vector<SamplerInfo> catalog = {
      {"uniform", "uniform without replacement, a fixed cohort size every round"},
  };
  return catalog;
}

std::vector<std::string> sampler_names() {
  std::vector<std::string> names;
  for (const auto& s : sampler_catalog()) names.push_back(s.name);
  return names;
}

std::unique_ptr<Sampler> make_sampler(const Scenario& scenario) {
  if (scenario.sampler.name == "uniform") {
    return std::make_unique<UniformSampler>(scenario.clients, scenario.sampler.cohort_size(scenario.clients),
                                            scenario.seed);
  }
  throw UserError("unknown sampler '" + scenario.sampler.name + "'");
}

UniformSampler::UniformSampler(std::uint32_t population, std::uint32_t cohort, std::uint64_t seed)
    : population_(population), cohort_(std::min(cohort, population)), seed_(seed) {}

std::vector<std::uint32_t> UniformSampler::select(std::uint32_t round) {
  Rng rng = make_stream(seed_, "sample", {round});
  std::vector<std::uint32_t> ids(population_);
  std::iota(ids.begin(), ids.end(), 0u);
  for (std::uint32_t i = 0; i < cohort_; ++i) {
    const auto j = i + static_cast<std::uint32_t>(rng.below(population_ - i));
    std::swap(ids[i], ids[j]);
  }
  ids.resize(cohort_);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace drift
