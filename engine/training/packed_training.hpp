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

// How a pack's steps run. Either way, every step's sample indices go to the device in one copy
// before the first step, and the sums and weights come back after one wait at the end.
struct PackOptions {
  // 0: at each local step the members whose batches have one size step together (a member with
  // a short last batch, or whose data has ended, steps apart or not at all): the CPU's way, whose
  // bits the shipped scenarios record. > 0: every step is the whole pack in one shape, each
  // member's batch padded to this many rows that weigh nothing, and a member whose data has
  // ended resting (PackedModel::step_padded); a GPU's way, where the launches cost more than the
  // arithmetic. Used only without batch statistics or augmentation, and when no batch is larger.
  std::int64_t pad_to = 0;
  bool forbid_syncs = false;  // make any host wait inside the step loop throw (GPU tests)
};

// Trains `members` from `task` (its weights loaded into every row) with the algorithm's
// packed objective; `prototype` is a model of the task's architecture (its weights are not
// used). Batches and augmentation draw from the same streams as train_locally. `data` is where
// the steps read it: its tensors on `device` (resident_on).
std::vector<PackOutcome> train_packed(const Model& prototype, const PackedObjective& objective, const Dataset& data,
                                      const TrainingTask& task, const std::vector<PackMember>& members,
                                      std::uint64_t seed, const torch::Device& device = torch::kCPU,
                                      const AugmentConfig& augment = {}, const PackOptions& options = {});

}  // namespace drift
