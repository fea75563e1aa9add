#pragma once
// A model's state as an ordered list of named tensors (parameters, then buffers). This is
// the unit that is averaged, sent and checked against an architecture.
// Only the tensor type: this header is everywhere, and <torch/torch.h> costs 15 s a file.
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace drift {

struct NamedTensor {
  std::string name;
  at::Tensor value;  // torch::Tensor is this type
};
using NamedTensors = std::vector<NamedTensor>;

// Detached copies of every parameter and buffer, in registration order.
NamedTensors state_of(const torch::nn::Module& module);

// Copies `state` into the module. Throws DecodeError naming the first tensor whose name,
// shape or dtype does not match the architecture, so a peer cannot load a wrong model.
void load_state(torch::nn::Module& module, const NamedTensors& state);

// Checks `state` against `reference` (names, order, shapes, dtypes) without copying.
void check_compatible(const NamedTensors& reference, const NamedTensors& state);

NamedTensors clone(const NamedTensors& state);

}  // namespace drift
