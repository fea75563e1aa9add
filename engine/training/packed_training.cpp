#include "engine/training/packed_training.hpp"

#include <algorithm>
#include <map>

#include "engine/training/batch_schedule.hpp"
#include "engine/training/job_sums.hpp"
#include "engine/training/local_training.hpp"
#include "engine/training/packed_model.hpp"

namespace drift {

std::vector<PackOutcome> train_packed(const Model& prototype, const PackedObjective& objective, const Dataset& data,
                                      const TrainingTask& task, const std::vector<PackMember>& members,
                                      std::uint64_t seed, const torch::Device& device, const AugmentConfig& augment) {
  const auto k = static_cast<std::int64_t>(members.size());
  const auto& hp = task.hyper;
  PackedModel packed(prototype, task.weights, k, device);
  const PackedSgd sgd{hp.learning_rate, hp.momentum, hp.weight_decay, hp.grad_clip, objective.proximal_mu};
  std::vector<BatchSchedule> schedules;
  std::size_t longest = 0;
  for (const auto& m : members) {
    schedules.push_back(batch_schedule(*m.indices, hp, m.client_id, task.round, seed));
    longest = std::max(longest, schedules.back().steps.size());
  }
  JobSums sums(k, device);
  const BatchSource source{&data, device,    &augment, augment.enabled() ? data.black() : torch::Tensor(),
                           seed,  task.round};
  for (std::size_t t = 0; t < longest; ++t) {
    // The members still training, by the size of their batch: a shorter last batch (or a
    // member that has finished) keeps a client out of the others' step.
    std::map<std::int64_t, std::vector<std::int64_t>> by_size;
    for (std::int64_t r = 0; r < k; ++r) {
      const auto& steps = schedules[static_cast<std::size_t>(r)].steps;
      if (t < steps.size()) by_size[steps[t].size].push_back(r);
    }
    for (const auto& [size, rows] : by_size) {
      std::vector<torch::Tensor> xs, ys;
      for (auto r : rows) {
        const auto& schedule = schedules[static_cast<std::size_t>(r)];
        auto [x, y] =
            scheduled_batch(source, schedule, schedule.steps[t], members[static_cast<std::size_t>(r)].client_id);
        xs.push_back(x);
        ys.push_back(y);
      }
      const auto [loss, hits] = packed.step(rows, torch::cat(xs, 1), torch::stack(ys), sgd);
      sums.add(torch::tensor(rows, torch::kInt64).to(device), loss, hits, size, static_cast<std::int64_t>(t));
    }
  }

  const auto totals = sums.read();
  std::vector<PackOutcome> out(members.size());
  for (std::int64_t r = 0; r < k; ++r) {
    const auto& m = members[static_cast<std::size_t>(r)];
    auto& o = out[static_cast<std::size_t>(r)];
    const auto row = static_cast<std::size_t>(r);
    if (totals.first_bad[row] >= 0) {
      o.error = non_finite_loss_message(m.client_id, task.round, totals.bad_value[row], totals.first_bad[row]);
      continue;
    }
    std::uint64_t seen = 0;
    const auto& steps = schedules[static_cast<std::size_t>(r)].steps;
    for (const auto& s : steps) seen += static_cast<std::uint64_t>(s.size);
    o.update = job_update(task, m.client_id, m.indices->size(), static_cast<std::uint32_t>(steps.size()), seen,
                          totals.loss[row], totals.correct[row]);
    o.update.weights = packed.unpack(r);
  }
  return out;
}

}  // namespace drift
