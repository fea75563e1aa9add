#include "engine/training/pack_stepper.hpp"

#include <algorithm>
#include <optional>

#include "engine/training/device_transfer.hpp"
#include "engine/training/pack_steps.hpp"

namespace drift {
namespace {

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

// One padded step of the whole pack on the samples `index` names (pad_to per member) with the
// batch sizes `sizes`, both on the data's device, its sums added to `sums`. The host does the
// same at every call: a CUDA graph of it serves every step.
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

// The rows that step at local step t.
std::vector<std::int64_t> stepping_rows(const std::vector<BatchSchedule>& schedules, std::size_t t) {
  std::vector<std::int64_t> rows;
  for (std::size_t r = 0; r < schedules.size(); ++r)
    if (t < schedules[r].steps.size()) rows.push_back(static_cast<std::int64_t>(r));
  return rows;
}

}  // namespace

// A pack size's model and sums, and the fixed tensors a step reads its samples and sizes from.
struct PackStepper::Held {
  std::unique_ptr<PackedModel> model;
  std::unique_ptr<JobSums> sums;
  torch::Tensor index, sizes;
  std::int64_t pad_to = 0;
};

PackStepper::PackStepper(const torch::Device& device, bool graphs)
    : device_(device), graphs_(graphs && step_graphs_supported(device)) {
  if (graphs_) pool_ = new_graph_pool();
}

PackStepper::~PackStepper() = default;

PackStepper::Held& PackStepper::held_for(const Model& prototype, const TrainingTask& task, std::int64_t members) {
  auto& held = held_[members];
  if (!held) {
    held = std::make_unique<Held>();
    held->model = std::make_unique<PackedModel>(prototype, task.weights, members, device_);
    held->sums = std::make_unique<JobSums>(members, device_);
  } else {
    held->model->restart(task.weights);
    held->sums->reset();
  }
  held->model->set_learning_rate(task.hyper.learning_rate);
  return *held;
}

void PackStepper::step(Held& held, const Dataset& data, const GraphKey& key, const PackedSgd& sgd) {
  auto body = [&] { padded_step(*held.model, *held.sums, data, held.index, held.sizes, held.pad_to, sgd); };
  if (!graphs_ || eager_only_.count(key) > 0) {
    ++counters_.eager_steps;
    return body();
  }
  auto it = graphs_by_key_.find(key);
  if (it == graphs_by_key_.end()) {
    // The first step of a key runs eagerly: it creates the library handles and workspaces the
    // capture then finds in place.
    if (warmed_.insert(key).second) {
      ++counters_.eager_steps;
      return body();
    }
    try {
      it = graphs_by_key_.emplace(key, capture_step(body, pool_)).first;
      ++counters_.captures;
    } catch (const std::exception&) {
      ++counters_.failed_captures;  // this key stays eager; the job goes on
      eager_only_.insert(key);
      ++counters_.eager_steps;
      return body();
    }
  }
  it->second->replay();
  ++counters_.replayed_steps;
}

std::vector<PackOutcome> PackStepper::train(const Model& prototype, const PackedObjective& objective,
                                            const Dataset& data, const TrainingTask& task,
                                            const std::vector<PackMember>& members, std::uint64_t seed,
                                            const AugmentConfig& augment, const PackOptions& options) {
  std::size_t longest = 0;
  const auto schedules = pack_schedules(members, task, seed, longest);
  // What cannot be padded runs as train_packed runs it, on a pack of its own.
  if (!pads(options, prototype, schedules, augment))
    return train_packed(prototype, objective, data, task, members, seed, device_, augment, options);
  return train_padded(prototype, objective, data, task, members, schedules, options);
}

std::vector<PackOutcome> PackStepper::train_padded(const Model& prototype, const PackedObjective& objective,
                                                   const Dataset& data, const TrainingTask& task,
                                                   const std::vector<PackMember>& members,
                                                   const std::vector<BatchSchedule>& schedules,
                                                   const PackOptions& options) {
  const auto k = static_cast<std::int64_t>(members.size());
  std::size_t longest = 0;
  for (const auto& s : schedules) longest = std::max(longest, s.steps.size());
  auto& held = held_for(prototype, task, k);

  const auto& hp = task.hyper;
  const PackedSgd sgd{hp.learning_rate, hp.momentum, hp.weight_decay, hp.grad_clip, objective.proximal_mu};
  const auto p = options.pad_to;
  if (held.pad_to != p || held.index.device() != data.images.device()) {
    // New inputs: graphs read the old ones, so their keys change with the addresses below.
    held.pad_to = p;
    held.index = torch::zeros({k * p}, torch::TensorOptions().dtype(torch::kInt64).device(data.images.device()));
    held.sizes = torch::zeros({k}, held.index.options());
  }
  const GraphKey key{k,
                     p,
                     sgd.momentum,
                     sgd.weight_decay,
                     sgd.grad_clip,
                     sgd.proximal_mu,
                     data.images.data_ptr(),
                     held.index.data_ptr()};
  const auto all = upload_indices(padded_indices(schedules, longest, p), data.images.device());
  std::optional<SyncsForbidden> no_waits;
  if (options.forbid_syncs) no_waits.emplace();
  for (std::size_t t = 0; t < longest; ++t) {
    const auto step_index = static_cast<std::int64_t>(t);
    held.index.copy_(all.narrow(0, step_index * k * p, k * p), /*non_blocking=*/true);
    held.sizes.copy_(all.narrow(0, static_cast<std::int64_t>(longest) * k * p + step_index * k, k),
                     /*non_blocking=*/true);
    step(held, data, key, sgd);
    held.model->count_steps(stepping_rows(schedules, t));
  }
  no_waits.reset();

  std::vector<torch::Tensor> host_sums;
  auto weights = held.model->unpack_all(held.sums->tensors(), host_sums);
  return pack_outcomes(task, members, schedules, JobSums::totals_of(host_sums), std::move(weights));
}

}  // namespace drift
