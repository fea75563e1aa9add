#pragma once
// Moving a job's inputs to a GPU and its results back with as few host waits as possible: the
// inputs go as one copy per dtype from pinned memory, which the host does not wait for, and
// everything coming back waits once. On the CPU these are plain copies.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "engine/tensors/named_tensors.hpp"

namespace drift {

// `values` as one int64 tensor on `device`; the host does not wait for the copy.
torch::Tensor upload_indices(const std::vector<std::int64_t>& values, const torch::Device& device);

// `state` (on the CPU) copied to `device` with one copy per dtype that the host does not wait
// for; on the CPU, a copy.
NamedTensors upload_state(const NamedTensors& state, const torch::Device& device);

// Copies `state` (on the CPU) into `module`'s parameters and buffers on `device`, checked as
// load_state checks it; one upload per dtype, and the host does not wait.
void load_state_on_device(torch::nn::Module& module, const NamedTensors& state, const torch::Device& device);

// `tensors` (all on `device`) copied to the CPU, in order, after one wait for the device.
std::vector<torch::Tensor> download(const std::vector<torch::Tensor>& tensors, const torch::Device& device);

// The module's parameters and buffers, named as state_of names them, copied to the CPU with
// one copy per dtype and `also` (device tensors) downloaded in the same wait; their CPU copies
// are returned through `also_out`.
NamedTensors state_to_cpu(const torch::nn::Module& module, const torch::Device& device,
                          const std::vector<torch::Tensor>& also, std::vector<torch::Tensor>& also_out);

}  // namespace drift
