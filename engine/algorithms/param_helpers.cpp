#include "engine/algorithms/param_helpers.hpp"

#include "engine/algorithms/aggregation.hpp"

namespace drift {

ParamSpec number_param(std::string key, double def, std::string help, std::optional<double> min,
                       std::optional<double> max, bool min_exclusive) {
  auto p = make_param(std::move(key), ParamKind::number, def, std::move(help));
  p.min = min;
  p.max = max;
  p.min_exclusive = min_exclusive;
  return p;
}

ParamSpec integer_param(std::string key, std::int64_t def, std::string help, std::optional<double> min,
                        std::optional<double> max) {
  auto p = make_param(std::move(key), ParamKind::integer, def, std::move(help));
  p.min = min;
  p.max = max;
  return p;
}

ParamSpec bool_param(std::string key, bool def, std::string help) {
  return make_param(std::move(key), ParamKind::boolean, def, std::move(help));
}

ParamSpec string_param(std::string key, std::string def, std::string help) {
  return make_param(std::move(key), ParamKind::string, std::move(def), std::move(help));
}

ParamSpec choice_param(std::string key, std::string def, std::vector<std::string> choices, std::string help) {
  auto p = make_param(std::move(key), ParamKind::string, std::move(def), std::move(help));
  p.choices = [choices] { return choices; };
  return p;
}

std::string neighbours_below_cohort(const ParamSet& params, const FederationShape& shape) {
  const auto m = params.integer("M");
  // One update per aggregation (FedAsync): a lone holder's knowledge is its own, as the
  // authors' code pairs a lone client with itself (docs/algorithms.md#aggregation).
  if (shape.cohort <= 1 || m < static_cast<std::int64_t>(shape.cohort)) return "";
  return "algorithm.M must be smaller than the clients aggregated per round (" + std::to_string(shape.cohort) +
         "), got " + std::to_string(m);
}

std::vector<double> update_weights(const std::string& weighting, const std::vector<ClientUpdate>& updates) {
  if (weighting == "samples") return sample_weights(updates);
  return std::vector<double>(updates.size(), updates.empty() ? 0.0 : 1.0 / static_cast<double>(updates.size()));
}

}  // namespace drift
