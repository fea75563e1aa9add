#include "engine/algorithms/param_helpers.hpp"

#include "engine/algorithms/aggregation.hpp"

namespace drift {

std::string neighbours_below_cohort(const ParamSet& params, const FederationShape& shape) {
  const auto m = params.integer("M");
  // One update per aggregation (FedAsync): a lone holder's knowledge is its own, as the
  // authors' code pairs a lone client with itself (docs/algorithms.md#aggregation).
  if (shape.cohort <= 1 || m < static_cast<std::int64_t>(shape.cohort)) return "";
  return "algorithm.M must be smaller than the clients aggregated per round (" + std::to_string(shape.cohort) +
         "), got " + std::to_string(m);
}

std::vector<double> update_weights(UpdateWeighting weighting, const std::vector<ClientUpdate>& updates) {
  if (weighting == UpdateWeighting::samples) return sample_weights(updates);
  return std::vector<double>(updates.size(), updates.empty() ? 0.0 : 1.0 / static_cast<double>(updates.size()));
}

}  // namespace drift
