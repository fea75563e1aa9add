#include "engine/algorithms/model_changes.hpp"

#include <stdexcept>

namespace drift {

std::int64_t floating_values(const NamedTensors& model) {
  std::int64_t n = 0;
  for (const auto& t : model)
    if (t.value.is_floating_point()) n += t.value.numel();
  return n;
}

std::uint64_t floating_bytes(const NamedTensors& model) {
  std::uint64_t n = 0;
  for (const auto& t : model)
    if (t.value.is_floating_point()) n += static_cast<std::uint64_t>(t.value.numel() * t.value.element_size());
  return n;
}

torch::Tensor flat_model(const NamedTensors& model) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (const auto& t : model)
    if (t.value.is_floating_point()) parts.push_back(t.value.to(torch::kFloat64).reshape({-1}));
  return parts.empty() ? torch::zeros({0}, torch::kFloat64) : torch::cat(parts);
}

NamedTensors model_from_flat(const NamedTensors& like, const torch::Tensor& flat,
                             const std::vector<ClientUpdate>& updates) {
  NamedTensors out;
  for (const auto& t : like)
    out.push_back({t.name, t.value.is_floating_point() ? torch::zeros_like(t.value) : t.value.clone()});
  apply_flat_step(out, flat, updates);
  return out;
}

torch::Tensor flat_change(const NamedTensors& weights, const NamedTensors& global) {
  check_compatible(global, weights);
  return flat_model(weights) - flat_model(global);
}

std::vector<torch::Tensor> flat_changes(const std::vector<ClientUpdate>& updates, const NamedTensors& global) {
  const auto x = flat_model(global);  // once for all the updates
  std::vector<torch::Tensor> changes;
  for (const auto& u : updates) {
    check_compatible(global, u.weights);
    changes.push_back(flat_model(u.weights) - x);
  }
  return changes;
}

torch::Tensor weighted_change_sum(const NamedTensors& global, const std::vector<ClientUpdate>& updates,
                                  const std::vector<double>& weights) {
  if (weights.size() != updates.size()) throw std::invalid_argument("one weight per update");
  torch::NoGradGuard no_grad;
  const auto changes = flat_changes(updates, global);
  auto sum = torch::zeros({floating_values(global)}, torch::kFloat64);
  for (std::size_t k = 0; k < updates.size(); ++k) sum += weights[k] * changes[k];
  return sum;
}

void apply_flat_step(NamedTensors& global, const torch::Tensor& step, const std::vector<ClientUpdate>& updates) {
  if (step.numel() != floating_values(global))
    throw std::invalid_argument("a flat step of " + std::to_string(step.numel()) + " values for a model of " +
                                std::to_string(floating_values(global)));
  torch::NoGradGuard no_grad;
  std::int64_t at = 0;
  for (std::size_t t = 0; t < global.size(); ++t) {
    auto& x = global[t].value;
    if (!x.is_floating_point()) {
      if (!updates.empty()) x = updates.front().weights.at(t).value.clone();
      continue;
    }
    const auto n = x.numel();
    const auto part = step.slice(0, at, at + n).view(x.sizes());
    x = (x.to(torch::kFloat64) + part).to(x.scalar_type());
    at += n;
  }
}

ClientShares shares_of(const std::vector<ClientUpdate>& updates, const std::vector<double>& coefficients) {
  if (coefficients.size() != updates.size())
    throw std::logic_error("shares_of: " + std::to_string(coefficients.size()) + " coefficients for " +
                           std::to_string(updates.size()) + " updates");
  ClientShares shares;
  for (std::size_t k = 0; k < updates.size(); ++k) shares.emplace_back(updates[k].client_id, coefficients[k]);
  return shares;
}

ClientShares equal_shares(const std::vector<ClientUpdate>& updates, double coefficient) {
  return shares_of(updates, std::vector<double>(updates.size(), coefficient));
}

}  // namespace drift
