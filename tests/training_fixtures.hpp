#pragma once
// A small federation of random images and the task a round sends, shared by the tests of the
// CPU and GPU trainers.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "engine/data/dataset.hpp"
#include "engine/models/model.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift::testing {

// Random grey 28x28 images, 10 classes, split among clients of the given sizes, on `device`.
struct Federation {
  Dataset data;
  std::vector<std::vector<std::int64_t>> indices;
};

inline Federation random_federation(const std::vector<std::int64_t>& sizes, std::uint64_t seed,
                                    const torch::Device& device = torch::kCPU) {
  torch::manual_seed(seed);
  std::int64_t total = 0;
  Federation f;
  for (auto n : sizes) {
    std::vector<std::int64_t> idx;
    for (std::int64_t i = 0; i < n; ++i) idx.push_back(total + i);
    f.indices.push_back(idx);
    total += n;
  }
  f.data.images = torch::randn({total, 1, 28, 28}).to(device);
  f.data.labels = torch::randint(10, {total}, torch::kInt64).to(device);
  f.data.num_classes = 10;
  return f;
}

// Round `round`'s task from `model`'s weights: SGD with momentum, weight decay and clipping,
// batches of 16.
inline TrainingTask sgd_task(const Model& model, std::uint32_t round, double lr, std::uint32_t epochs) {
  TrainingTask task;
  task.round = round;
  task.model_version = round > 0 ? round - 1 : 0;  // the global model of the round before
  task.weights = state_of(model);
  for (auto& t : task.weights) t.value = t.value.to(torch::kCPU);
  task.hyper.learning_rate = lr;
  task.hyper.momentum = 0.9;
  task.hyper.weight_decay = 1e-3;
  task.hyper.grad_clip = 1.0;
  task.hyper.batch_size = 16;
  task.hyper.local_epochs = epochs;
  return task;
}

// Largest |a - b| over two updates' tensors, after checking that they name the same tensors.
inline double weight_gap(const NamedTensors& a, const NamedTensors& b) {
  if (a.size() != b.size()) return 1e30;
  double gap = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name) return 1e30;
    gap = std::max(gap, (a[i].value.to(torch::kDouble) - b[i].value.to(torch::kDouble)).abs().max().item<double>());
  }
  return gap;
}

// Whether two updates' tensors are the same bits.
inline bool same_bits(const NamedTensors& a, const NamedTensors& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || !torch::equal(a[i].value, b[i].value)) return false;
  return true;
}

}  // namespace drift::testing
