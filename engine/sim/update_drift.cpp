#include "engine/sim/update_drift.hpp"

#include <torch/torch.h>

#include <cmath>

namespace drift {
namespace {

// sum_k weight * n_k * (w_k - global), flattened to one float64 vector, and sum_k weight * n_k.
void accumulate(const NamedTensors& global, const std::vector<const ClientUpdate*>& updates, double weight,
                torch::Tensor& sum, double& total) {
  for (const auto* u : updates) {
    const double n = weight * static_cast<double>(u->num_samples);
    std::vector<torch::Tensor> parts;
    for (std::size_t i = 0; i < global.size() && i < u->weights.size(); ++i) {
      if (!global[i].value.is_floating_point()) continue;
      parts.push_back((u->weights[i].value.to(torch::kFloat64) - global[i].value.to(torch::kFloat64)).flatten());
    }
    if (parts.empty()) continue;
    const auto delta = torch::cat(parts) * n;
    sum = sum.defined() ? sum + delta : delta;
    total += n;
  }
}

}  // namespace

UpdateDrift update_drift(const NamedTensors& global, const std::vector<const ClientUpdate*>& cohort,
                         const std::vector<const ClientUpdate*>& shadow, std::uint64_t not_selected) {
  torch::NoGradGuard no_grad;
  UpdateDrift out{std::nan(""), std::nan("")};
  torch::Tensor cohort_sum, shadow_sum;
  double cohort_total = 0.0, shadow_total = 0.0;
  accumulate(global, cohort, 1.0, cohort_sum, cohort_total);
  const double r = shadow.empty() ? 0.0 : static_cast<double>(not_selected) / static_cast<double>(shadow.size());
  accumulate(global, shadow, r, shadow_sum, shadow_total);
  if (cohort_total <= 0.0 || shadow_total <= 0.0) return out;
  const auto cohort_mean = cohort_sum / cohort_total;
  const auto population = (cohort_sum + shadow_sum) / (cohort_total + shadow_total);
  const double population_norm = population.norm().item<double>();
  const double cohort_norm = cohort_mean.norm().item<double>();
  if (population_norm == 0.0 || cohort_norm == 0.0) return out;
  out.relative_l2 = (cohort_mean - population).norm().item<double>() / population_norm;
  out.cosine = (cohort_mean * population).sum().item<double>() / (cohort_norm * population_norm);
  return out;
}

}  // namespace drift
