#include "engine/algorithms/aggregation.hpp"

#include <stdexcept>

#include "engine/core/error.hpp"

namespace drift {

LabelledRows stack_class_vectors(const std::vector<ClientUpdate>& updates, const std::string& key,
                                 std::int64_t num_classes) {
  std::vector<torch::Tensor> rows;
  std::vector<std::int64_t> labels;
  for (const auto& u : updates) {
    auto it = u.payload.class_vectors.find(key);
    if (it == u.payload.class_vectors.end()) continue;
    for (const auto& [c, row] : it->second) {
      if (static_cast<std::int64_t>(c) >= num_classes) throw DecodeError("'" + key + "' vector of an unknown class");
      const auto r = row.reshape({-1, row.size(-1)}).to(torch::kFloat32);
      rows.push_back(r);
      labels.insert(labels.end(), static_cast<std::size_t>(r.size(0)), static_cast<std::int64_t>(c));
    }
  }
  if (rows.empty()) return {};
  return {torch::cat(rows), torch::tensor(labels, torch::kInt64)};
}

std::vector<double> sample_weights(const std::vector<ClientUpdate>& updates) {
  double total = 0.0;
  for (const auto& u : updates) total += static_cast<double>(u.num_samples);
  std::vector<double> weights;
  weights.reserve(updates.size());
  for (const auto& u : updates) {
    weights.push_back(total > 0.0 ? static_cast<double>(u.num_samples) / total
                                  : 1.0 / static_cast<double>(updates.size()));
  }
  return weights;
}

NamedTensors weighted_average(const NamedTensors& global, const std::vector<ClientUpdate>& updates,
                              const std::vector<double>& weights) {
  if (updates.empty()) throw std::invalid_argument("weighted_average of no updates");
  if (weights.size() != updates.size()) throw std::invalid_argument("one weight per update");
  for (const auto& u : updates) check_compatible(global, u.weights);

  torch::NoGradGuard no_grad;
  NamedTensors out;
  out.reserve(global.size());
  for (std::size_t i = 0; i < global.size(); ++i) {
    const auto& reference = global[i].value;
    if (!reference.is_floating_point()) {
      out.push_back({global[i].name, updates.front().weights[i].value.clone()});
      continue;
    }
    auto acc = torch::zeros(reference.sizes(), reference.options().dtype(torch::kFloat64));
    for (std::size_t k = 0; k < updates.size(); ++k) {
      acc.add_(updates[k].weights[i].value.to(torch::kFloat64), weights[k]);
    }
    out.push_back({global[i].name, acc.to(reference.scalar_type())});
  }
  return out;
}

}  // namespace drift
