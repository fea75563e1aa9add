#include "engine/training/pack_stepper.hpp"

#include <optional>

#include "engine/training/device_transfer.hpp"
#include "engine/training/pack_steps.hpp"

namespace drift {

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
  const auto k = static_cast<std::int64_t>(members.size());
  std::size_t longest = 0;
  const auto schedules = pack_schedules(members, task, seed, longest);
  // What cannot be padded runs as train_packed runs it, on a pack of its own.
  if (!pads(options, prototype, schedules, augment))
    return train_packed(prototype, objective, data, task, members, seed, device_, augment, options);
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
