#include "engine/training/device_transfer.hpp"

#include <c10/core/impl/VirtualGuardImpl.h>

#include <cstring>
#include <map>

namespace drift {
namespace {

torch::Tensor pinned_like(const torch::Tensor& t) {
  return torch::empty(t.sizes(), t.options().device(torch::kCPU).pinned_memory(true));
}

void wait_for(const torch::Device& device) {
  // Through c10's device-generic interface, as device_data does: it links against a CPU-only
  // LibTorch too.
  const c10::impl::VirtualGuardImpl guard(device.type());
  guard.synchronizeStream(guard.getStream(device));
}

NamedTensors targets_of(const torch::nn::Module& module) {
  NamedTensors out;
  for (const auto& p : module.named_parameters(true)) out.push_back({p.key(), p.value()});
  for (const auto& b : module.named_buffers(true)) out.push_back({b.key(), b.value()});
  return out;
}

// Positions of `tensors` grouped by dtype, in order within each group.
std::map<c10::ScalarType, std::vector<std::size_t>> by_dtype(const NamedTensors& tensors) {
  std::map<c10::ScalarType, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < tensors.size(); ++i) groups[tensors[i].value.scalar_type()].push_back(i);
  return groups;
}

}  // namespace

torch::Tensor upload_indices(const std::vector<std::int64_t>& values, const torch::Device& device) {
  const auto n = static_cast<std::int64_t>(values.size());
  auto host = torch::from_blob(const_cast<std::int64_t*>(values.data()), {n}, torch::kInt64);
  if (device.is_cpu()) return host.clone();
  // Pinned, so the copy runs without the host; LibTorch's pinned allocator keeps the block
  // until the copy is done, after `pinned` goes out of scope.
  auto pinned = pinned_like(host);
  std::memcpy(pinned.data_ptr<std::int64_t>(), values.data(), values.size() * sizeof(std::int64_t));
  return pinned.to(device, /*non_blocking=*/true);
}

NamedTensors upload_state(const NamedTensors& state, const torch::Device& device) {
  NamedTensors out(state.size());
  if (device.is_cpu()) {
    for (std::size_t i = 0; i < state.size(); ++i) out[i] = {state[i].name, state[i].value.clone()};
    return out;
  }
  for (const auto& [dtype, members] : by_dtype(state)) {
    std::int64_t total = 0;
    for (auto i : members) total += state[i].value.numel();
    auto pinned = torch::empty({total}, torch::TensorOptions().dtype(dtype).pinned_memory(true));
    auto* base = static_cast<char*>(pinned.data_ptr());
    std::int64_t at = 0;
    for (auto i : members) {
      const auto source = state[i].value.to(torch::kCPU).contiguous();  // no copy when on the CPU already
      std::memcpy(base + at * pinned.element_size(), source.data_ptr(), source.nbytes());
      at += source.numel();
    }
    const auto flat = pinned.to(device, /*non_blocking=*/true);
    at = 0;
    for (auto i : members) {
      const auto& source = state[i].value;
      out[i] = {state[i].name, flat.narrow(0, at, source.numel()).view(source.sizes())};
      at += source.numel();
    }
  }
  return out;
}

void load_state_on_device(torch::nn::Module& module, const NamedTensors& state, const torch::Device& device) {
  if (device.is_cpu()) return load_state(module, state);
  const auto targets = targets_of(module);
  check_compatible(targets, state);
  torch::NoGradGuard no_grad;
  const auto uploaded = upload_state(state, device);
  for (std::size_t i = 0; i < targets.size(); ++i) targets[i].value.copy_(uploaded[i].value);
}

std::vector<torch::Tensor> download(const std::vector<torch::Tensor>& tensors, const torch::Device& device) {
  std::vector<torch::Tensor> out;
  if (device.is_cpu()) {
    for (const auto& t : tensors) out.push_back(t.clone());
    return out;
  }
  for (const auto& t : tensors) {
    out.push_back(pinned_like(t));
    out.back().copy_(t, /*non_blocking=*/true);
  }
  wait_for(device);
  return out;
}

NamedTensors state_to_cpu(const torch::nn::Module& module, const torch::Device& device,
                          const std::vector<torch::Tensor>& also, std::vector<torch::Tensor>& also_out) {
  torch::NoGradGuard no_grad;
  const auto sources = targets_of(module);
  const auto groups = by_dtype(sources);
  std::vector<torch::Tensor> flats = also;
  for (const auto& [dtype, members] : groups) {
    std::vector<torch::Tensor> parts;
    for (auto i : members) parts.push_back(sources[i].value.detach().reshape({-1}));
    flats.push_back(torch::cat(parts));
  }
  auto host = download(flats, device);
  also_out.assign(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(also.size()));
  NamedTensors out(sources.size());
  std::size_t next = also.size();
  for (const auto& [dtype, members] : groups) {
    const auto& flat = host[next++];
    std::int64_t at = 0;
    for (auto i : members) {
      const auto& source = sources[i].value;
      // A copy of its own in pageable memory: updates and private states outlive the job, and
      // pinned memory is scarce.
      out[i] = {sources[i].name, flat.narrow(0, at, source.numel()).view(source.sizes()).clone()};
      at += source.numel();
    }
  }
  return out;
}

}  // namespace drift
