#include <algorithm>
#include <cstdio>

#include "engine/config/catalog.hpp"
#include "engine/core/error.hpp"
#include "engine/population/population.hpp"
#include "engine/population/topology.hpp"
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

bool draws_poisson(const Scenario& s) {
  const auto* row = find_sampler(s.sampler.name);
  return row != nullptr && row->design == SamplingDesign::poisson;
}

std::vector<std::string> used_sampler_names(const Scenario& s) {
  std::vector<std::string> names{s.sampler.name};
  for (const auto& e : s.timeline)
    if (e.action == TimelineAction::sampler) names.push_back(e.sampler);
  return names;
}

namespace {
// ", edges online by markov" where some edge follows [hierarchy.availability_model].
std::string edges_by_model(const HierarchyConfig& h) {
  for (std::uint32_t e = 0; e < h.edges; ++e)
    if (edge_profile(h, e).availability == EdgeAvailability::model)
      return ", edges online by " + h.availability_model.model;
  return "";
}
}  // namespace

std::string cohort_description(const Scenario& s) {
  if (const auto& h = s.hierarchy; h.enabled() && !draws_poisson(s))
    return std::to_string(s.sampler.cohort_size(std::max(1u, s.clients / h.edges))) + " clients per edge round at " +
           std::to_string(h.edges) + (h.named.empty() ? "" : " named") + " edges (" + name_of(h.assign) + "), " +
           std::to_string(h.edge_rounds) + " edge round(s) per " +
           (h.cloud == EdgeCloud::fedbuff
                ? "loop, the cloud stepping every " + std::to_string(h.buffer) + " edge model(s) (fedbuff" +
                      (h.concurrency > 0 ? ", " + std::to_string(h.concurrency) + " edges at work at most)" : ")")
                : std::string("cloud round")) +
           (expected_online_edges(h) < h.edges ? ", diurnal edges" : "") + edges_by_model(h);
  if (!draws_poisson(s)) return std::to_string(s.sampler.cohort_size(s.clients)) + " clients per round";
  char text[96];
  std::snprintf(text, sizeof text, "each client with probability %g (%g expected)", poisson_rate(s),
                poisson_rate(s) * s.clients);
  return text;
}

namespace {

Rows<SamplerInfo>& sampler_rows() {
  // The order `drift list` shows them in.
  static Rows<SamplerInfo> catalog = {
      uniform_sampler_info(),       poisson_sampler_info(),     availability_aware_sampler_info(),
      size_weighted_sampler_info(), round_robin_sampler_info(), power_of_choice_sampler_info(),
      cyclic_sampler_info(),        stratified_sampler_info(),
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
