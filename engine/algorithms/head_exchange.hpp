#pragma once
// Sharing only the classifier head of private models (LG-FedAvg, FedGH): heads have one shape
// across architectures because every backbone ends in the common feature width
// ([model] feature_dim). The head's tensors travel in the payload as "head.weight" and
// "head.bias", the names they have in the model.
#include "engine/models/model.hpp"
#include "engine/tensors/payload.hpp"

namespace drift {

// The model's head tensors ("head.weight", "head.bias"), detached, on the CPU.
void put_head(const Model& model, Payload& payload);

// Copies the payload's head tensors into the model, if the payload has them. Throws
// DecodeError for a shape that does not fit.
void load_head(Model& model, const Payload& payload);

// The head tensors of `payload` (possibly none).
std::map<std::string, torch::Tensor> head_tensors(const Payload& payload);

}  // namespace drift
