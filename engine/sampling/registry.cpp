#include "engine/core/error.hpp"
#include "engine/population/population.hpp"
#include "engine/sampling/samplers.hpp"

namespace drift {

std::vector<std::vector<std::uint32_t>> dominant_label_strata(const Population& population) {
  std::vector<std::vector<std::uint32_t>> strata(
      static_cast<std::size_t>(std::max<std::int64_t>(population.num_classes, 1)));
  for (std::uint32_t c = 0; c < population.size(); ++c) {
    std::size_t label = 0;
    if (!population.histograms.empty()) {
      const auto& h = population.histograms[c];
      label = static_cast<std::size_t>(std::max_element(h.begin(), h.end()) - h.begin());
    }
    strata[label].push_back(c);
  }
  strata.erase(std::remove_if(strata.begin(), strata.end(), [](const auto& s) { return s.empty(); }), strata.end());
  return strata;
}

std::vector<std::vector<std::uint32_t>> strata_of(const Population& population, CyclicStrata kind) {
  std::vector<std::vector<std::uint32_t>> strata;
  if (kind != CyclicStrata::labels)
    for (const auto& members : population.group_members)
      if (!members.empty()) strata.push_back(members);
  return strata.empty() ? dominant_label_strata(population) : strata;
}

const std::vector<SamplerInfo>& sampler_catalog() {
  static const std::vector<SamplerInfo> catalog = {
      {"uniform", "uniform without replacement, blind to availability (offline picks cannot train)"},
      {"availability_aware", "uniform over the clients online at selection time"},
      {"size_weighted", "without replacement, proportional to data size"},
      {"round_robin", "the next clients in id order, wrapping around"},
      {"power_of_choice", "d = candidates x count drawn by size, keep the highest latest loss (Cho et al.)"},
      {"cyclic", "rotates through groups (or dominant labels): controlled sampling drift"},
      {"stratified", "label-stratified quotas proportional to the population: drift-reducing baseline"},
  };
  return catalog;
}

std::vector<std::string> sampler_names() {
  std::vector<std::string> names;
  for (const auto& s : sampler_catalog()) names.push_back(s.name);
  return names;
}

std::unique_ptr<Sampler> make_sampler(const std::string& name, const Scenario& s, const Population& population) {
  if (name == "uniform") return std::make_unique<UniformSampler>(population.size(), s.seed);
  if (name == "availability_aware") return std::make_unique<AvailabilityAwareSampler>(population.size(), s.seed);
  if (name == "size_weighted") return std::make_unique<SizeWeightedSampler>(population, s.seed);
  if (name == "round_robin") return std::make_unique<RoundRobinSampler>(population.size());
  if (name == "power_of_choice")
    return std::make_unique<PowerOfChoiceSampler>(population, s.seed, s.sampler.candidates);
  if (name == "cyclic") return std::make_unique<CyclicSampler>(population, s.seed, s.sampler.strata);
  if (name == "stratified") return std::make_unique<StratifiedSampler>(population, s.seed);
  throw UserError("unknown sampler '" + name + "'");
}

}  // namespace drift
