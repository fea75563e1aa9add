#include "engine/training/pack_steps.hpp"

#include "engine/training/local_training.hpp"

namespace drift {

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

std::vector<std::int64_t> padded_indices(const std::vector<BatchSchedule>& schedules, std::size_t longest,
                                         std::int64_t pad_to) {
  std::vector<std::int64_t> flat, sizes;
  for (std::size_t t = 0; t < longest; ++t) {
    for (const auto& schedule : schedules) {
      const bool stepping = t < schedule.steps.size();
      const auto size = stepping ? schedule.steps[t].size : 0;
      const auto* first = stepping ? schedule.indices(schedule.steps[t]) : nullptr;
      const std::int64_t rest = stepping ? *first : (schedule.steps.empty() ? 0 : *schedule.indices(schedule.steps[0]));
      if (stepping) flat.insert(flat.end(), first, first + size);
      flat.insert(flat.end(), static_cast<std::size_t>(pad_to - size), rest);
      sizes.push_back(size);
    }
  }
  flat.insert(flat.end(), sizes.begin(), sizes.end());
  return flat;
}

torch::Tensor member_major(const torch::Tensor& images, std::int64_t members) {
  std::vector<std::int64_t> split{members, images.size(0) / members};
  std::vector<std::int64_t> packed{images.size(0) / members, members * images.size(1)};
  for (std::int64_t d = 1; d < images.dim(); ++d) split.push_back(images.size(d));
  for (std::int64_t d = 2; d < images.dim(); ++d) packed.push_back(images.size(d));
  return images.view(split).transpose(0, 1).reshape(packed);
}

bool fits(const std::vector<BatchSchedule>& schedules, std::int64_t pad_to) {
  for (const auto& s : schedules)
    for (const auto& step : s.steps)
      if (step.size > pad_to) return false;
  return true;
}

bool pads(const PackOptions& options, const torch::nn::Module& prototype, const std::vector<BatchSchedule>& schedules,
          const AugmentConfig& augment) {
  return options.pad_to > 0 && !augment.enabled() && !has_batch_statistics(prototype) &&
         fits(schedules, options.pad_to);
}

void padded_step(PackedModel& pack, JobSums& sums, const Dataset& data, const torch::Tensor& index,
                 const torch::Tensor& sizes, std::int64_t pad_to, const PackedSgd& sgd) {
  const auto k = pack.size();
  const auto device = sums.tensors().front().device();
  const auto x = member_major(data.images.index_select(0, index), k).to(device);
  const auto y = data.labels.index_select(0, index).view({k, pad_to}).to(device);
  const auto on_device = sizes.to(device);
  const auto [loss, hits] = pack.step_padded(x, y, on_device, sgd);
  sums.add_all(loss, hits, on_device);
}

std::vector<std::int64_t> stepping_rows(const std::vector<BatchSchedule>& schedules, std::size_t t) {
  std::vector<std::int64_t> rows;
  for (std::size_t r = 0; r < schedules.size(); ++r)
    if (t < schedules[r].steps.size()) rows.push_back(static_cast<std::int64_t>(r));
  return rows;
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
