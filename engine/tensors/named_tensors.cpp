#include "engine/tensors/named_tensors.hpp"

#include <torch/torch.h>

#include <sstream>

#include "engine/core/error.hpp"

namespace drift {
namespace {

std::string shape_string(const torch::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

}  // namespace

NamedTensors state_of(const torch::nn::Module& module) {
  NamedTensors out;
  torch::NoGradGuard no_grad;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) out.push_back({p.key(), p.value().detach().clone()});
  for (const auto& b : module.named_buffers(/*recurse=*/true)) out.push_back({b.key(), b.value().detach().clone()});
  return out;
}

void check_compatible(const NamedTensors& reference, const NamedTensors& state) {
  if (reference.size() != state.size()) {
    throw DecodeError("model state has " + std::to_string(state.size()) + " tensors but the architecture has " +
                      std::to_string(reference.size()));
  }
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const auto& want = reference[i];
    const auto& got = state[i];
    if (want.name != got.name)
      throw DecodeError("model tensor #" + std::to_string(i) + " is '" + got.name + "' but the architecture expects '" +
                        want.name + "'");
    if (want.value.sizes() != got.value.sizes())
      throw DecodeError("tensor '" + got.name + "' has shape " + shape_string(got.value) +
                        " but the architecture expects " + shape_string(want.value));
    if (want.value.scalar_type() != got.value.scalar_type())
      throw DecodeError("tensor '" + got.name + "' has dtype " + std::string(c10::toString(got.value.scalar_type())) +
                        " but the architecture expects " + std::string(c10::toString(want.value.scalar_type())));
  }
}

void load_state(torch::nn::Module& module, const NamedTensors& state) {
  NamedTensors targets;
  for (const auto& p : module.named_parameters(true)) targets.push_back({p.key(), p.value()});
  for (const auto& b : module.named_buffers(true)) targets.push_back({b.key(), b.value()});
  check_compatible(targets, state);
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < targets.size(); ++i) targets[i].value.copy_(state[i].value);
}

NamedTensors clone(const NamedTensors& state) {
  NamedTensors out;
  out.reserve(state.size());
  for (const auto& t : state) out.push_back({t.name, t.value.clone()});
  return out;
}

}  // namespace drift
