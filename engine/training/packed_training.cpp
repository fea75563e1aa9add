#include "engine/training/packed_training.hpp"

#include <algorithm>
#include <map>

#include "engine/core/rng.hpp"
#include "engine/data/augment.hpp"
#include "engine/training/batch_schedule.hpp"
#include "engine/training/device_data.hpp"
#include "engine/training/local_training.hpp"
#include "engine/training/packed_model.hpp"

namespace drift {
namespace {

// What the pack sums on the device for every member, read once at the end.
struct PackSums {
  torch::Tensor loss, correct, first_bad, bad_value;

  PackSums(std::int64_t k, const torch::Device& device) {
    const auto on = torch::TensorOptions().device(device);
    loss = torch::zeros({k}, on.dtype(torch::kFloat64));
    correct = torch::zeros({k}, on.dtype(torch::kInt64));
    first_bad = torch::full({k}, -1, on.dtype(torch::kInt64));
    bad_value = torch::zeros({k}, on.dtype(torch::kFloat64));
  }

  // Rows `index` took local step `step` with batches of `size`.
  void add(const torch::Tensor& index, const torch::Tensor& row_loss, const torch::Tensor& hits, std::int64_t size,
           std::int64_t step) {
    torch::NoGradGuard no_grad;
    const auto value = row_loss.to(torch::kFloat64);
    loss.index_add_(0, index, value * static_cast<double>(size));
    correct.index_add_(0, index, hits);
    const auto before = first_bad.index_select(0, index);
    const auto bad = torch::logical_and(before.lt(0), torch::logical_not(torch::isfinite(value)));
    first_bad.index_copy_(0, index, torch::where(bad, torch::full_like(before, step), before));
    bad_value.index_copy_(0, index, torch::where(bad, value, bad_value.index_select(0, index)));
  }
};

}  // namespace

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
  PackSums sums(k, device);
  const auto black = augment.enabled() ? data.black() : torch::Tensor();
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
        const auto& m = members[static_cast<std::size_t>(r)];
        const auto& schedule = schedules[static_cast<std::size_t>(r)];
        const auto& step = schedule.steps[t];
        auto idx = indices_for(data, torch::from_blob(const_cast<std::int64_t*>(schedule.indices(step)), {size}, torch::kInt64));
        auto x = data.images.index_select(0, idx).to(device);
        if (augment.enabled()) {
          Rng draws = make_stream(seed, "augment", {m.client_id, task.round, step.epoch, step.number});
          x = augment_batch(x, augment, black, draws);
        }
        xs.push_back(x);
        ys.push_back(data.labels.index_select(0, idx).to(device));
      }
      const auto [loss, hits] = packed.step(rows, torch::cat(xs, 1), torch::stack(ys), sgd);
      sums.add(torch::tensor(rows, torch::kInt64).to(device), loss, hits, size, static_cast<std::int64_t>(t));
    }
  }

  const auto loss = sums.loss.cpu(), correct = sums.correct.cpu(), first_bad = sums.first_bad.cpu();
  const auto bad_value = sums.bad_value.cpu();
  std::vector<PackOutcome> out(members.size());
  for (std::int64_t r = 0; r < k; ++r) {
    const auto& m = members[static_cast<std::size_t>(r)];
    auto& o = out[static_cast<std::size_t>(r)];
    if (const auto at = first_bad[r].item<std::int64_t>(); at >= 0) {
      o.error = non_finite_loss_message(m.client_id, task.round, bad_value[r].item<double>(), at);
      continue;
    }
    std::uint64_t seen = 0;
    for (const auto& s : schedules[static_cast<std::size_t>(r)].steps) seen += static_cast<std::uint64_t>(s.size);
    auto& u = o.update;
    u.client_id = m.client_id;
    u.round = task.round;
    u.model_version = task.model_version;
    u.num_samples = m.indices->size();
    u.weights = packed.unpack(r);
    u.metrics.loss = seen ? loss[r].item<double>() / static_cast<double>(seen) : 0.0;
    u.metrics.accuracy = seen ? static_cast<double>(correct[r].item<std::int64_t>()) / static_cast<double>(seen) : 0.0;
    u.metrics.steps = static_cast<std::uint32_t>(schedules[static_cast<std::size_t>(r)].steps.size());
    u.metrics.samples_seen = seen;
  }
  return out;
}

}  // namespace drift
