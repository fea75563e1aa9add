#include "engine/training/packed_training.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "engine/training/batch_schedule.hpp"
#include "engine/training/cuda_support.hpp"
#include "engine/training/device_transfer.hpp"
#include "engine/training/job_sums.hpp"
#include "engine/training/local_training.hpp"
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

// Every member at every step, `pad_to` rows each: its batch and then copies of the batch's first
// sample, or `pad_to` copies of a sample of its own once it has finished (a real sample, so the
// padding's values stay finite); after them, each step's batch sizes (0: finished).
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

// Images of `members` clients, `rows` each and client by client [members * rows, C, H, W], as
// a pack's input: [rows, members * C, H, W], client k's images in channel block k.
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

// Each member's update, or why it failed.
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

}  // namespace

std::vector<PackOutcome> train_packed(const Model& prototype, const PackedObjective& objective, const Dataset& data,
                                      const TrainingTask& task, const std::vector<PackMember>& members,
                                      std::uint64_t seed, const torch::Device& device, const AugmentConfig& augment,
                                      const PackOptions& options) {
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
  // Augmentation draws each member's transforms on the host, batch by batch.
  const bool padded =
      options.pad_to > 0 && !augment.enabled() && !packed.has_batch_statistics() && fits(schedules, options.pad_to);
  std::vector<std::int64_t> flat;
  const auto plan = padded ? std::vector<std::vector<SizeGroup>>() : size_groups(schedules, longest, flat);
  if (padded) flat = padded_indices(schedules, longest, options.pad_to);
  const auto all = flat.empty() ? torch::Tensor() : upload_indices(flat, data.images.device());
  std::optional<SyncsForbidden> no_waits;
  if (options.forbid_syncs) no_waits.emplace();
  for (std::size_t t = 0; t < longest; ++t) {
    if (padded) {
      const auto step = static_cast<std::int64_t>(t);
      const auto index = all.narrow(0, step * k * options.pad_to, k * options.pad_to);
      const auto sizes = all.narrow(0, static_cast<std::int64_t>(longest) * k * options.pad_to + step * k, k);
      std::vector<std::int64_t> stepping;
      for (std::int64_t r = 0; r < k; ++r)
        if (t < schedules[static_cast<std::size_t>(r)].steps.size()) stepping.push_back(r);
      const auto x = member_major(data.images.index_select(0, index), k).to(device);
      const auto y = data.labels.index_select(0, index).view({k, options.pad_to}).to(device);
      const auto [loss, hits] = packed.step_padded(x, y, sizes.to(device), stepping, sgd);
      sums.add_all(loss, hits, sizes.to(device), step);
      continue;
    }
    for (const auto& g : plan[t]) {
      const auto s = static_cast<std::int64_t>(g.rows.size());
      const auto rows = all.narrow(0, g.at, s);
      const auto samples = all.narrow(0, g.at + s, s * g.size);
      torch::Tensor x;
      if (augment.enabled()) {
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
      const auto [loss, hits] = packed.step(g.rows, rows.to(device), x, y, sgd);
      sums.add(rows.to(device), loss, hits, g.size, static_cast<std::int64_t>(t));
    }
  }
  no_waits.reset();

  std::vector<torch::Tensor> host_sums;
  auto weights = packed.unpack_all(sums.tensors(), host_sums);
  return pack_outcomes(task, members, schedules, JobSums::totals_of(host_sums), std::move(weights));
}

}  // namespace drift
