#include "engine/training/device_trainer.hpp"

#include <optional>

#include "engine/core/rng.hpp"
#include "engine/data/augment.hpp"
#include "engine/training/batch_schedule.hpp"
#include "engine/training/device_transfer.hpp"
#include "engine/training/local_training.hpp"

namespace drift {
namespace {

// Graphs of one trainer share one memory pool, so a new batch shape costs little memory; this
// bounds how many it keeps (a batch size plus its clients' short last batches).
constexpr std::size_t kMaxGraphs = 256;

// The job's batches as one list of sample indices, and where each step's batch starts in it.
std::vector<std::int64_t> flat_indices(const BatchSchedule& schedule, std::vector<std::int64_t>& starts) {
  std::vector<std::int64_t> flat;
  for (const auto& step : schedule.steps) {
    starts.push_back(static_cast<std::int64_t>(flat.size()));
    const auto* first = schedule.indices(step);
    flat.insert(flat.end(), first, first + step.size);
  }
  return flat;
}

}  // namespace

DeviceTrainer::DeviceTrainer(Model& model, const torch::Device& device, Options options)
    : model_(model),
      device_(device),
      options_(options),
      graphs_possible_(options.graphs && step_graphs_supported(device)),
      state_(model, device) {
  if (graphs_possible_) pool_ = new_graph_pool();
}

std::optional<DeviceTrainer::GraphKey> DeviceTrainer::graph_key(const ClientContext& ctx, const StepSettings& settings,
                                                                const ClientAlgorithm* loss_owner,
                                                                const AugmentConfig& augment) const {
  // Augmentation draws each batch's transforms on the host.
  if (!graphs_possible_ || !job_capturable_ || augment.enabled()) return std::nullopt;
  GraphKey key{settings, ctx.data->images.data_ptr(), ctx.data->labels.data_ptr(), loss_owner, {}};
  if (loss_owner == nullptr) return key;
  auto step = loss_owner->step_graph_key(ctx);
  if (!step) return std::nullopt;
  key.step = std::move(*step);
  return key;
}

bool DeviceTrainer::replay(const Dataset& data, const torch::Tensor& indices, const GraphKey& key,
                           const StepLoss& loss) {
  const auto& settings = key.settings;
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    // The first step of a shape runs eagerly: it creates the library handles and workspaces
    // the capture then finds in place.
    if (warmed_.insert(key).second || graphs_.size() >= kMaxGraphs || eager_only_.count(key) > 0) return false;
    Captured captured;
    captured.indices = torch::empty({settings.batch}, indices.options());
    const auto& slot = captured.indices;
    try {
      captured.graph = capture_step(
          [&] { state_.step(data.images.index_select(0, slot), data.labels.index_select(0, slot), loss, settings); },
          pool_);
    } catch (const std::exception&) {
      // This shape stays eager; the job goes on.
      ++counters_.failed_captures;
      eager_only_.insert(key);
      return false;
    }
    ++counters_.captures;
    it = graphs_.emplace(key, std::move(captured)).first;
  }
  it->second.indices.copy_(indices, /*non_blocking=*/true);
  it->second.graph->replay();
  ++counters_.replayed_steps;
  return true;
}

ClientUpdate DeviceTrainer::train(ClientAlgorithm& algorithm, const PackedObjective* objective, const Dataset& data,
                                  const std::vector<std::int64_t>& indices, const TrainingTask& task_in,
                                  std::uint32_t client_id, Payload& state_in, std::uint64_t seed,
                                  const AugmentConfig& augment) {
  // The algorithm sees its payload and state where the model is, as in train_locally.
  TrainingTask task = task_in;  // tensor handles: the weights are not copied
  task.payload = payload_on(task_in.payload, device_);
  Payload state = payload_on(state_in, device_);
  auto ctx = begin_client(model_, algorithm, data, indices, task, client_id, state, seed, device_);

  auto extra = algorithm.extra_parameters();
  // The trainer computes the loss itself where the algorithm's objective says what it is; the
  // eager and the captured steps then run the same code.
  const bool own_objective = objective != nullptr && extra.empty();
  const double mu = own_objective ? objective->proximal_mu : 0.0;
  const ClientAlgorithm* loss_owner = own_objective ? nullptr : &algorithm;
  // Extra tensors get momentum buffers of their own each job: a graph would hold the last ones.
  job_capturable_ = extra.empty();
  state_.begin_job(task.hyper.learning_rate, mu > 0.0, std::move(extra));
  const StepLoss loss =
      own_objective
          ? StepLoss([this, mu](const torch::Tensor& y, const ModelOutput& out) {
              return state_.objective_loss(y, out, mu);
            })
          : StepLoss([&](const torch::Tensor& y, const ModelOutput& out) { return algorithm.loss(y, out, ctx); });
  const auto schedule = batch_schedule(indices, task.hyper, client_id, task.round, seed);
  const auto seen = run_steps(ctx, schedule, loss, mu, loss_owner, augment);

  std::vector<torch::Tensor> sums;
  auto weights = state_to_cpu(model_, device_, state_.sums(), sums);
  const auto totals = StepState::totals_of(sums);
  if (totals.first_bad >= 0)
    throw TrainingError(non_finite_loss_message(client_id, task.round, totals.bad_value, totals.first_bad));
  auto update = job_update(task, client_id, indices.size(), static_cast<std::uint32_t>(schedule.steps.size()), seen,
                           totals.loss, totals.correct);
  update.weights = std::move(weights);
  algorithm.end(ctx, update);
  update.payload = payload_on(update.payload, torch::kCPU);
  state_in = payload_on(state, torch::kCPU);
  return update;
}

std::uint64_t DeviceTrainer::run_steps(ClientContext& ctx, const BatchSchedule& schedule, const StepLoss& loss,
                                       double mu, const ClientAlgorithm* loss_owner, const AugmentConfig& augment) {
  const auto& data = *ctx.data;
  const auto& hp = ctx.task.hyper;
  std::vector<std::int64_t> starts;
  const auto all = upload_indices(flat_indices(schedule, starts), data.images.device());
  const auto black = augment.enabled() ? data.black() : torch::Tensor();
  if (!schedule.steps.empty()) ctx.last_epoch = schedule.steps.back().epoch;
  std::optional<SyncsForbidden> no_waits;
  if (options_.forbid_syncs) no_waits.emplace();
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
    const auto& step = schedule.steps[i];
    ctx.epoch = step.epoch;
    seen += static_cast<std::uint64_t>(step.size);
    const StepSettings settings{step.size, hp.momentum, hp.weight_decay, hp.grad_clip, mu};
    const auto batch = all.narrow(0, starts[i], step.size);
    ctx.inputs = nullptr;  // a captured loss reads no batch of the host's
    if (const auto key = graph_key(ctx, settings, loss_owner, augment); key && replay(data, batch, *key, loss))
      continue;
    auto x = data.images.index_select(0, batch);
    const auto y = data.labels.index_select(0, batch);
    if (augment.enabled()) {
      Rng draws = make_stream(ctx.seed, "augment", {ctx.client_id, ctx.task.round, step.epoch, step.number});
      x = augment_batch(x, augment, black, draws);
    }
    ctx.inputs = &x;
    state_.step(x, y, loss, settings);
    ++counters_.eager_steps;
  }
  return seen;
}

}  // namespace drift
