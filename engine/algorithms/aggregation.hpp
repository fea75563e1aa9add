#pragma once
// Aggregation primitives shared by algorithms.
#include <string>
#include <vector>

#include "engine/tensors/federated_types.hpp"

namespace drift {

// Weights proportional to each update's sample count (FedAvg's N_k / sum N).
std::vector<double> sample_weights(const std::vector<ClientUpdate>& updates);

// sum_k w_k * state_k, accumulated in float64 in the given order and cast back to each
// tensor's dtype. Integer tensors (e.g. BatchNorm's num_batches_tracked) cannot be averaged:
// they are taken from the first update. Delta updates are added to `global` first.
NamedTensors weighted_average(const NamedTensors& global, const std::vector<ClientUpdate>& updates,
                              const std::vector<double>& weights);

// Every row uploaded under class-vector family `key`, as one labelled set: rows [n, d]
// float32 and labels [n] int64, in client-id then class order (the updates' order). Empty
// tensors when nobody uploaded. Throws DecodeError for a class id >= num_classes.
struct LabelledRows {
  torch::Tensor rows, labels;
  bool empty() const { return !rows.defined(); }
};
LabelledRows stack_class_vectors(const std::vector<ClientUpdate>& updates, const std::string& key,
                                 std::int64_t num_classes);

}  // namespace drift
