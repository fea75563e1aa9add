#pragma once
// The pieces of a pack job that train_packed (engine/training/packed_training) and a GPU slot's
// PackStepper (engine/training/pack_stepper) share: the members' schedules, the pack's input
// layout, whether a job pads, and the outcomes (docs/performance.md#packed-clients).
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "engine/training/batch_schedule.hpp"
#include "engine/training/job_sums.hpp"
#include "engine/training/packed_model.hpp"
#include "engine/training/packed_training.hpp"

namespace drift {

// Each member's batch schedule, and the most steps any member takes.
std::vector<BatchSchedule> pack_schedules(const std::vector<PackMember>& members, const TrainingTask& task,
                                          std::uint64_t seed, std::size_t& longest);

// Images of `members` clients, `rows` each and client by client [members * rows, C, H, W], as
// a pack's input: [rows, members * C, H, W], client k's images in channel block k.
torch::Tensor member_major(const torch::Tensor& images, std::int64_t members);

// Whether this job steps padded: asked for, and no batch statistics, augmentation or oversized batch.
bool pads(const PackOptions& options, const torch::nn::Module& prototype, const std::vector<BatchSchedule>& schedules,
          const AugmentConfig& augment);

// Each member's update, or why it failed.
std::vector<PackOutcome> pack_outcomes(const TrainingTask& task, const std::vector<PackMember>& members,
                                       const std::vector<BatchSchedule>& schedules, const JobSums::Totals& totals,
                                       std::vector<NamedTensors> weights);

}  // namespace drift
