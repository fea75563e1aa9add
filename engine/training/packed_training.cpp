#include "engine/training/packed_training.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "engine/training/batch_schedule.hpp"
#include "engine/training/cuda_support.hpp"
#include "engine/training/device_transfer.hpp"
#include "engine/training/job_sums.hpp"
#include "engine/training/local_training.hpp"
#include "engine/training/pack_stepper.hpp"
#include "engine/training/pack_steps.hpp"
#include "engine/training/packed_model.hpp"

namespace drift {
namespace {

// The members still training at one local step with batches of one size: their rows, then
// their samples, start at `at` in the job's index list.
struct SizeGroup {
  std::int64_t size = 0;
  std::vector<std::int64_t> rows;
  std::int64_t at = 0;
};

// Every step's size groups, and the index list (rows and samples of every group in turn) that
// goes to the device in one copy before the first step.
std::vector<std::vector<SizeGroup>> size_groups(const std::vector<BatchSchedule>& schedules, std::size_t longest,
                                                std::vector<std::int64_t>& flat) {
  std::vector<std::vector<SizeGroup>> plan(longest);
  for (std::size_t t = 0; t < longest; ++t) {
    // A shorter last batch (or a member that has finished) keeps a client out of the others' step.
    std::map<std::int64_t, std::vector<std::int64_t>> by_size;
    for (std::size_t r = 0; r < schedules.size(); ++r)
      if (t < schedules[r].steps.size()) by_size[schedules[r].steps[t].size].push_back(static_cast<std::int64_t>(r));
    for (auto& [size, rows] : by_size) {
      SizeGroup g{size, std::move(rows), static_cast<std::int64_t>(flat.size())};
      flat.insert(flat.end(), g.rows.begin(), g.rows.end());
      for (auto r : g.rows) {
        const auto& schedule = schedules[static_cast<std::size_t>(r)];
        const auto* first = schedule.indices(schedule.steps[t]);
        flat.insert(flat.end(), first, first + size);
      }
      plan[t].push_back(std::move(g));
    }
  }
  return plan;
}

// The members' steps in size groups (PackOptions::pad_to = 0), on the job's uploaded index list.
void size_group_steps(PackedModel& packed, JobSums& sums, const std::vector<std::vector<SizeGroup>>& plan,
                      const torch::Tensor& all, const std::vector<BatchSchedule>& schedules,
                      const std::vector<PackMember>& members, const BatchSource& source, const PackedSgd& sgd) {
  const auto& data = *source.data;
  const auto& device = source.device;
  for (std::size_t t = 0; t < plan.size(); ++t) {
    for (const auto& g : plan[t]) {
      const auto s = static_cast<std::int64_t>(g.rows.size());
      const auto rows = all.narrow(0, g.at, s).to(device);
      const auto samples = all.narrow(0, g.at + s, s * g.size);
      torch::Tensor x;
      if (source.augment != nullptr && source.augment->enabled()) {
        // Augmentation draws each member's transforms on the host, batch by batch.
        std::vector<torch::Tensor> xs;
        for (auto r : g.rows) {
          const auto& schedule = schedules[static_cast<std::size_t>(r)];
          xs.push_back(
              scheduled_batch(source, schedule, schedule.steps[t], members[static_cast<std::size_t>(r)].client_id)
                  .first);
        }
        x = torch::cat(xs, 1);
      } else {
        x = member_major(data.images.index_select(0, samples), s).to(device);
      }
      const auto y = data.labels.index_select(0, samples).view({s, g.size}).to(device);
      const auto [loss, hits] = packed.step(g.rows, rows, x, y, sgd);
      sums.add(rows, loss, hits, g.size, static_cast<std::int64_t>(t));
    }
  }
}

}  // namespace

std::vector<PackOutcome> train_packed(const Model& prototype, const PackedObjective& objective, const Dataset& data,
                                      const TrainingTask& task, const std::vector<PackMember>& members,
                                      std::uint64_t seed, const torch::Device& device, const AugmentConfig& augment,
                                      const PackOptions& options) {
  std::size_t longest = 0;
  const auto schedules = pack_schedules(members, task, seed, longest);
  // One shape a step: a stepper's loop, eagerly, on a pack that no later job reuses.
  if (pads(options, prototype, schedules, augment))
    return PackStepper(device, false).train_padded(prototype, objective, data, task, members, schedules, options);

  const auto k = static_cast<std::int64_t>(members.size());
  const auto& hp = task.hyper;
  PackedModel packed(prototype, task.weights, k, device);
  const PackedSgd sgd{hp.learning_rate, hp.momentum, hp.weight_decay, hp.grad_clip, objective.proximal_mu};
  JobSums sums(k, device);
  const BatchSource source{&data, device,    &augment, augment.enabled() ? data.black() : torch::Tensor(),
                           seed,  task.round};
  std::vector<std::int64_t> flat;
  const auto plan = size_groups(schedules, longest, flat);
  const auto all = flat.empty() ? torch::Tensor() : upload_indices(flat, data.images.device());
  std::optional<SyncsForbidden> no_waits;
  if (options.forbid_syncs) no_waits.emplace();
  size_group_steps(packed, sums, plan, all, schedules, members, source, sgd);
  no_waits.reset();

  std::vector<torch::Tensor> host_sums;
  auto weights = packed.unpack_all(sums.tensors(), host_sums);
  return pack_outcomes(task, members, schedules, JobSums::totals_of(host_sums), std::move(weights));
}

}  // namespace drift
