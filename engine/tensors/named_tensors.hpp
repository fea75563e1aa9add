#pragma once
// A model's state as an ordered list of named tensors (parameters, then buffers). This is
// the unit that is averaged, sent and checked against an architecture.
#include <torch/torch.h>

#include <string>
#include <vector>

namespace drift {

struct NamedTensor {
  std::string name;
  torch::Tensor value;
};
using NamedTensors = std::vector<NamedTensor>;

// Detached copies of every parameter and buffer, in registration order.
NamedTensors state_of(const torch::nn::Module& module);

// Copies `state` into the module. Throws DecodeError naming the first tensor whose name,
// shape or dtype does not match the architecture, so a peer cannot load a wrong model.
void load_state(torch::nn::Module& module, const NamedTensors& state);

// Checks `state` against `reference` (names, order, shapes, dtypes) without copying.
void check_compatible(const NamedTensors& reference, const NamedTensors& state);

std::int64_t byte_size(const NamedTensors& state);
NamedTensors clone(const NamedTensors& state);

}  // namespace drift
