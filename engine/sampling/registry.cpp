#include <cstdio>

#include "engine/config/catalog.hpp"
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

double poisson_rate(const Scenario& s) {
  if (s.sampler.fraction > 0) return s.sampler.fraction;
  return std::min(1.0, static_cast<double>(s.sampler.clients_per_round) / std::max<double>(s.clients, 1));
}

std::string cohort_description(const Scenario& s) {
  if (s.sampler.name != "poisson") return std::to_string(s.sampler.cohort_size(s.clients)) + " clients per round";
  char text[96];
  std::snprintf(text, sizeof text, "each client with probability %g (%g expected)", poisson_rate(s),
                poisson_rate(s) * s.clients);
  return text;
}

namespace {

Rows<SamplerInfo>& sampler_rows() {
  using S = Scenario;
  using P = Population;
  static Rows<SamplerInfo> catalog = {
      {"uniform", "uniform without replacement, blind to availability (offline picks cannot train)",
       [](const S& s, const P& p) { return std::make_unique<UniformSampler>(p.size(), s.seed); },
       SamplingDesign::fixed_size, ""},
      {"poisson", "each client independently with probability fraction (cohort size varies): DP's amplification",
       [](const S& s, const P& p) { return std::make_unique<PoissonSampler>(p.size(), poisson_rate(s), s.seed); },
       SamplingDesign::poisson, ""},
      {"availability_aware", "uniform over the clients online at selection time",
       [](const S& s, const P& p) { return std::make_unique<AvailabilityAwareSampler>(p.size(), s.seed); },
       SamplingDesign::none, ""},
      {"size_weighted", "without replacement, proportional to data size",
       [](const S& s, const P& p) { return std::make_unique<SizeWeightedSampler>(p, s.seed); }, SamplingDesign::none,
       "sizes"},
      {"round_robin", "the next clients in id order, wrapping around",
       [](const S&, const P& p) { return std::make_unique<RoundRobinSampler>(p.size()); }, SamplingDesign::none, ""},
      {"power_of_choice", "d = candidates x count drawn by size, keep the highest latest loss (Cho et al.)",
       [](const S& s, const P& p) { return std::make_unique<PowerOfChoiceSampler>(p, s.seed, s.sampler.candidates); },
       SamplingDesign::none, "sizes and training losses"},
      {"cyclic", "rotates through groups (or dominant labels): controlled sampling drift",
       [](const S& s, const P& p) { return std::make_unique<CyclicSampler>(p, s.seed, s.sampler.strata); },
       SamplingDesign::none, "labels (or the groups they define)"},
      {"stratified", "label-stratified quotas proportional to the population: drift-reducing baseline",
       [](const S& s, const P& p) { return std::make_unique<StratifiedSampler>(p, s.seed); }, SamplingDesign::none,
       "labels"},
  };
  return catalog;
}

}  // namespace

const Rows<SamplerInfo>& sampler_catalog() { return sampler_rows(); }

void register_sampler(SamplerInfo info) { add_row(sampler_rows(), std::move(info), "sampler"); }

std::vector<std::string> sampler_names() { return row_names(sampler_catalog()); }

const SamplerInfo* find_sampler(const std::string& name) { return find_row(sampler_catalog(), name); }

std::unique_ptr<Sampler> make_sampler(const std::string& name, const Scenario& s, const Population& population) {
  return row_named(sampler_catalog(), name, "sampler").make(s, population);
}

}  // namespace drift
