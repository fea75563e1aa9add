#pragma once
// A GPU slot's packs, job after job (devices.pack; docs/performance.md#packed-clients). It keeps
// one PackedModel and its sums per pack size and restarts them for each job, so their tensors
// keep their addresses; a padded step then launches the same kernels on the same addresses at
// every call, which a CUDA graph captures once (per pack size, padding and SGD settings) and
// replays. Steps it cannot pad run as train_packed runs them.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include "engine/training/batch_schedule.hpp"
#include "engine/training/cuda_support.hpp"
#include "engine/training/packed_training.hpp"

namespace drift {

class PackedModel;
class JobSums;

class PackStepper {
 public:
  struct Counters {
    std::uint64_t eager_steps = 0, replayed_steps = 0, captures = 0, failed_captures = 0;
  };

  // `graphs`: capture and replay where the build and the device allow (devices.graphs).
  PackStepper(const torch::Device& device, bool graphs);
  ~PackStepper();
  PackStepper(const PackStepper&) = delete;
  PackStepper& operator=(const PackStepper&) = delete;

  // What train_packed does for the same arguments, to the bit.
  std::vector<PackOutcome> train(const Model& prototype, const PackedObjective& objective, const Dataset& data,
                                 const TrainingTask& task, const std::vector<PackMember>& members, std::uint64_t seed,
                                 const AugmentConfig& augment, const PackOptions& options);

  // The same for a job that pads (pads(): pad_to set, no batch statistics, augmentation or
  // oversized batch), given its members' schedules (pack_schedules).
  std::vector<PackOutcome> train_padded(const Model& prototype, const PackedObjective& objective, const Dataset& data,
                                        const TrainingTask& task, const std::vector<PackMember>& members,
                                        const std::vector<BatchSchedule>& schedules, const PackOptions& options);

  const Counters& counters() const { return counters_; }

 private:
  struct Held;  // one pack size's model, sums and step inputs
  // What a captured step depends on besides the tensors it reads in place.
  using GraphKey = std::tuple<std::int64_t, std::int64_t, double, double, double, double, const void*, const void*>;

  Held& held_for(const Model& prototype, const TrainingTask& task, std::int64_t members);
  // The step on `held`'s inputs: replayed (captured first if needed), or run eagerly.
  void step(Held& held, const Dataset& data, const GraphKey& key, const struct PackedSgd& sgd);

  torch::Device device_;
  bool graphs_ = false;
  GraphPool pool_{0, 0};
  std::map<std::int64_t, std::unique_ptr<Held>> held_;
  std::map<GraphKey, std::unique_ptr<StepGraph>> graphs_by_key_;
  std::set<GraphKey> warmed_, eager_only_;
  Counters counters_;
};

}  // namespace drift
