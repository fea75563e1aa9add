#include "engine/training/pack_steps.hpp"

#include "engine/training/local_training.hpp"

namespace drift {
namespace {

// Whether every batch fits in `pad_to` rows.
bool fits(const std::vector<BatchSchedule>& schedules, std::int64_t pad_to) {
  for (const auto& s : schedules)
    for (const auto& step : s.steps)
      if (step.size > pad_to) return false;
  return true;
}

}  // namespace

std::vector<BatchSchedule> pack_schedules(const std::vector<PackMember>& members, const TrainingTask& task,
                                          std::uint64_t seed, std::size_t& longest) {
  std::vector<BatchSchedule> schedules;
  longest = 0;
  for (const auto& m : members) {
    schedules.push_back(batch_schedule(*m.indices, task.hyper, m.client_id, task.round, seed));
    longest = std::max(longest, schedules.back().steps.size());
  }
  return schedules;
}

torch::Tensor member_major(const torch::Tensor& images, std::int64_t members) {
  std::vector<std::int64_t> split{members, images.size(0) / members};
  std::vector<std::int64_t> packed{images.size(0) / members, members * images.size(1)};
  for (std::int64_t d = 1; d < images.dim(); ++d) split.push_back(images.size(d));
  for (std::int64_t d = 2; d < images.dim(); ++d) packed.push_back(images.size(d));
  return images.view(split).transpose(0, 1).reshape(packed);
}

bool pads(const PackOptions& options, const torch::nn::Module& prototype, const std::vector<BatchSchedule>& schedules,
          const AugmentConfig& augment) {
  return options.pad_to > 0 && !augment.enabled() && !has_batch_statistics(prototype) &&
         fits(schedules, options.pad_to);
}

std::vector<PackOutcome> pack_outcomes(const TrainingTask& task, const std::vector<PackMember>& members,
                                       const std::vector<BatchSchedule>& schedules, const JobSums::Totals& totals,
                                       std::vector<NamedTensors> weights) {
  std::vector<PackOutcome> out(members.size());
  for (std::size_t row = 0; row < members.size(); ++row) {
    const auto& m = members[row];
    auto& o = out[row];
    if (totals.first_bad[row] >= 0) {
      o.error = non_finite_loss_message(m.client_id, task.round, totals.bad_value[row], totals.first_bad[row]);
      continue;
    }
    std::uint64_t seen = 0;
    const auto& steps = schedules[row].steps;
    for (const auto& s : steps) seen += static_cast<std::uint64_t>(s.size);
    o.update = job_update(task, m.client_id, m.indices->size(), static_cast<std::uint32_t>(steps.size()), seen,
                          totals.loss[row], totals.correct[row]);
    o.update.weights = std::move(weights[row]);
  }
  return out;
}

}  // namespace drift
