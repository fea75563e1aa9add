#include <torch/torch.h>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"

namespace drift {

torch::Tensor ClientAlgorithm::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext&) {
  return torch::nn::functional::cross_entropy(out.logits, labels);
}

const std::vector<AlgorithmInfo>& algorithm_catalog() {
  static const std::vector<AlgorithmInfo> catalog = {fedavg_info(),  fedprox_info(),    fedavgm_info(), fedadam_info(),
                                                     fedyogi_info(), fedadagrad_info(), scaffold_info(), fedproto_info()};
  return catalog;
}

const AlgorithmInfo* find_algorithm(const std::string& name) {
  for (const auto& a : algorithm_catalog())
    if (a.name == name) return &a;
  return nullptr;
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const auto& a : algorithm_catalog()) names.push_back(a.name);
  return names;
}

}  // namespace drift
