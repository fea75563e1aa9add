#pragma once
// Local training of a pack: several clients of one round trained in lockstep as one
// PackedModel (docs/performance.md#packed-clients). Each client sees exactly the batches, in
// the order, that train_locally would give it, and leaves the pack's steps when its own data
// ends; its update equals its unpacked one up to float rounding.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/config/scenario.hpp"
#include "engine/data/dataset.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

struct PackMember {
  std::uint32_t client_id = 0;
  const std::vector<std::int64_t>* indices = nullptr;  // the client's training samples
};

// A member's result: its update, or why its training failed (a non-finite loss fails that
// client only, as it would unpacked).
struct PackOutcome {
  ClientUpdate update;
  std::string error;
};

// Trains `members` from `task` (its weights loaded into every row) with the algorithm's
// packed objective; `prototype` is a model of the task's architecture (its weights are not
// used). Batches and augmentation draw from the same streams as train_locally.
std::vector<PackOutcome> train_packed(const Model& prototype, const PackedObjective& objective, const Dataset& data,
                                      const TrainingTask& task, const std::vector<PackMember>& members,
                                      std::uint64_t seed, const torch::Device& device = torch::kCPU,
                                      const AugmentConfig& augment = {});

}  // namespace drift
