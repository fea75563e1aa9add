#pragma once
// Client changes as one flat float64 vector over a model's floating-point tensors, for the
// server halves that weigh, keep and sum changes rather than models (FedAU, MIFA, FedVARP,
// the uniform FedAvgs, amplified FedAvg): docs/algorithms.md#participation.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "engine/tensors/federated_types.hpp"

namespace drift {

// How many floating-point values the model has, and their bytes (the size of one stored change).
std::int64_t floating_values(const NamedTensors& model);
std::uint64_t floating_bytes(const NamedTensors& model);

// The floating-point tensors of `model`, concatenated in model order, in float64.
torch::Tensor flat_model(const NamedTensors& model);

// A model shaped like `like` holding `flat` (float64, as flat_model gives it) in each tensor's
// own dtype; integer tensors come from the first of `updates`, or from `like` without any.
NamedTensors model_from_flat(const NamedTensors& like, const torch::Tensor& flat,
                             const std::vector<ClientUpdate>& updates = {});

// (client id, coefficients[k]) for each update k, in the updates' (client-id) order.
ClientShares shares_of(const std::vector<ClientUpdate>& updates, const std::vector<double>& coefficients);
// Every update with the same coefficient.
ClientShares equal_shares(const std::vector<ClientUpdate>& updates, double coefficient);

// w - x over the floating-point tensors, concatenated in model order.
torch::Tensor flat_change(const NamedTensors& weights, const NamedTensors& global);
// Each update's w_k - x, with x flattened once.
std::vector<torch::Tensor> flat_changes(const std::vector<ClientUpdate>& updates, const NamedTensors& global);

// sum_k weights[k] (w_k - x), accumulated in float64 in the updates' order.
torch::Tensor weighted_change_sum(const NamedTensors& global, const std::vector<ClientUpdate>& updates,
                                  const std::vector<double>& weights);

// x <- x + step over the floating-point tensors, computed in float64; each tensor keeps its
// dtype. Integer tensors (BatchNorm's counters) cannot be stepped: with updates, they are
// taken from the first one, as FedAvg does; without, they stay.
void apply_flat_step(NamedTensors& global, const torch::Tensor& step, const std::vector<ClientUpdate>& updates = {});

}  // namespace drift
