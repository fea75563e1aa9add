#pragma once
// The pieces of a pack job that train_packed (engine/training/packed_training) and a GPU slot's
// PackStepper (engine/training/pack_stepper) share: the members' schedules, the padded index
// list, one padded step and the outcomes (docs/performance.md#packed-clients).
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

// Every member at every step, `pad_to` rows each: its batch and then copies of the batch's first
// sample, or `pad_to` copies of a sample of its own once it has finished (a real sample, so the
// padding's values stay finite); after them, each step's batch sizes (0: finished).
std::vector<std::int64_t> padded_indices(const std::vector<BatchSchedule>& schedules, std::size_t longest,
                                         std::int64_t pad_to);

// Images of `members` clients, `rows` each and client by client [members * rows, C, H, W], as
// a pack's input: [rows, members * C, H, W], client k's images in channel block k.
torch::Tensor member_major(const torch::Tensor& images, std::int64_t members);

// Whether every batch fits in `pad_to` rows.
bool fits(const std::vector<BatchSchedule>& schedules, std::int64_t pad_to);
// Whether this job steps padded: asked for, and no batch statistics, augmentation or oversized batch.
bool pads(const PackOptions& options, const torch::nn::Module& prototype, const std::vector<BatchSchedule>& schedules,
          const AugmentConfig& augment);

// One padded step of the whole pack on the samples `index` names (pad_to per member) with the
// batch sizes `sizes`, both on the data's device, its sums added to `sums`. The host does the
// same at every call: a CUDA graph of it serves every step.
void padded_step(PackedModel& pack, JobSums& sums, const Dataset& data, const torch::Tensor& index,
                 const torch::Tensor& sizes, std::int64_t pad_to, const PackedSgd& sgd);

// The rows that step at local step t.
std::vector<std::int64_t> stepping_rows(const std::vector<BatchSchedule>& schedules, std::size_t t);

// Each member's update, or why it failed.
std::vector<PackOutcome> pack_outcomes(const TrainingTask& task, const std::vector<PackMember>& members,
                                       const std::vector<BatchSchedule>& schedules, const JobSums::Totals& totals,
                                       std::vector<NamedTensors> weights);

}  // namespace drift
