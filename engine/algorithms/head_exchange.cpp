#include "engine/algorithms/head_exchange.hpp"

#include "engine/core/error.hpp"

namespace drift {
namespace {
const char* const kHeadNames[] = {"head.weight", "head.bias"};
}  // namespace

void put_head(const Model& model, Payload& payload) {
  const auto params = model.named_parameters();
  for (const char* name : kHeadNames)
    if (const auto* t = params.find(name)) payload.tensors[name] = t->detach().to(torch::kCPU).clone();
}

void load_head(Model& model, const Payload& payload) {
  torch::NoGradGuard no_grad;
  auto params = model.named_parameters();
  for (const char* name : kHeadNames) {
    auto it = payload.tensors.find(name);
    if (it == payload.tensors.end()) continue;
    auto* target = params.find(name);
    if (target == nullptr || !target->sizes().equals(it->second.sizes()))
      throw DecodeError(std::string("shared '") + name + "' does not fit the model's head");
    target->copy_(it->second);
  }
}

std::map<std::string, torch::Tensor> head_tensors(const Payload& payload) {
  std::map<std::string, torch::Tensor> out;
  for (const char* name : kHeadNames)
    if (auto it = payload.tensors.find(name); it != payload.tensors.end()) out[name] = it->second;
  return out;
}

}  // namespace drift
