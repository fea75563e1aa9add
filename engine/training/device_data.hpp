#pragma once
// A dataset's tensors where training reads them. On a GPU each process holds one copy of the
// training and test tensors per device, made on first use and shared by every slot of that
// device, so batches are gathered on the device instead of being copied there one by one.
// On the CPU the dataset itself is used.
#include <torch/torch.h>

#include <memory>

#include "engine/data/dataset.hpp"
#include "engine/training/devices.hpp"

namespace drift {

// `data` with its images and labels on `device` (the other fields copied as they are), or
// `data` itself on the CPU. A device's copy lives as long as a slot holds it.
std::shared_ptr<const Dataset> resident_on(const std::shared_ptr<const Dataset>& data, const torch::Device& device);

// Makes the calling thread issue its kernels for `device` on a stream of its own, so that the
// slots of one GPU overlap instead of queueing on its default stream. Nothing on the CPU.
void use_own_stream(const torch::Device& device);

// Asks LibTorch for the same kernels and the same reductions on every run when `devices` holds
// a GPU, so that GPU runs are byte-identical across runs and slot counts, as CPU runs are
// (docs/devices.md#determinism). Call before the first kernel. Nothing for a CPU-only pool: its
// kernels are deterministic with the one intra-op thread of cpu_arithmetic.hpp.
void use_deterministic_kernels(const std::vector<DeviceSlots>& devices);

// Indices for `data`'s tensors: moved to where they live (a no-op on the CPU).
inline torch::Tensor indices_for(const Dataset& data, const torch::Tensor& indices) {
  return indices.to(data.images.device());
}

}  // namespace drift
