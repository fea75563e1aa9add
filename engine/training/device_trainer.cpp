#include "engine/training/device_trainer.hpp"

#include <optional>

#include "engine/core/phase_times.hpp"
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

// The job's batches as one list, and where each step's slice starts in it: a batch's sample
// indices, or with `pad_to` > 0 its indices padded to `pad_to` with its first sample (a real
// one, so the padding rows' values stay finite), then one flag a row, 1 for its samples.
std::vector<std::int64_t> flat_indices(const BatchSchedule& schedule, std::int64_t pad_to,
                                       std::vector<std::int64_t>& starts) {
  std::vector<std::int64_t> flat;
  for (const auto& step : schedule.steps) {
    starts.push_back(static_cast<std::int64_t>(flat.size()));
    const auto* first = schedule.indices(step);
    flat.insert(flat.end(), first, first + step.size);
    if (pad_to == 0) continue;
    flat.insert(flat.end(), static_cast<std::size_t>(pad_to - step.size), *first);
    flat.insert(flat.end(), static_cast<std::size_t>(step.size), 1);
    flat.insert(flat.end(), static_cast<std::size_t>(pad_to - step.size), 0);
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
                                                                const AugmentConfig& augment, bool padded) const {
  // Augmentation draws each batch's transforms on the host.
  if (!graphs_possible_ || !job_capturable_ || augment.enabled()) return std::nullopt;
  GraphKey key{settings, ctx.data->images.data_ptr(), ctx.data->labels.data_ptr(), loss_owner, {}, padded};
  if (loss_owner == nullptr) return key;
  auto step = loss_owner->step_graph_key(ctx);
  if (!step) return std::nullopt;
  key.step = std::move(*step);
  return key;
}

void DeviceTrainer::step_on(const Dataset& data, const torch::Tensor& slice, std::int64_t padded, const StepLoss& loss,
                            const StepSettings& settings) {
  if (padded == 0) {
    state_.step(data.images.index_select(0, slice), data.labels.index_select(0, slice), loss, settings);
    return;
  }
  const auto rows = slice.narrow(0, 0, padded);
  const auto weights = slice.narrow(0, padded, padded).to(torch::kFloat32);
  state_.step(data.images.index_select(0, rows), data.labels.index_select(0, rows), loss, settings, weights);
}

std::int64_t DeviceTrainer::padding_for(const TrainingTask& task, const BatchSchedule& schedule, bool own_objective,
                                        const AugmentConfig& augment) const {
  // Only the trainer's own loss knows the weights; augmentation draws each batch on the host.
  if (!options_.pad_short_batches || !own_objective || augment.enabled()) return 0;
  const auto batch = static_cast<std::int64_t>(task.hyper.batch_size);
  const auto pad_to = options_.largest_client > 0 ? std::min(batch, options_.largest_client) : batch;
  for (const auto& step : schedule.steps)
    if (step.size > pad_to) return 0;  // a batch larger than the padding: this job is not padded
  return pad_to;
}

bool DeviceTrainer::replay(const Dataset& data, const torch::Tensor& slice, const GraphKey& key, const StepLoss& loss) {
  const auto& settings = key.settings;
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    // The first step of a shape runs eagerly: it creates the library handles and workspaces
    // the capture then finds in place.
    if (warmed_.insert(key).second || graphs_.size() >= kMaxGraphs || eager_only_.count(key) > 0) return false;
    Captured captured;
    captured.indices = torch::empty_like(slice);
    const auto& slot = captured.indices;
    const std::int64_t padded = key.padded ? settings.batch : 0;
    try {
      captured.graph = capture_step([&] { step_on(data, slot, padded, loss, settings); }, pool_);
    } catch (const std::exception&) {
      // This shape stays eager; the job goes on.
      ++counters_.failed_captures;
      eager_only_.insert(key);
      return false;
    }
    ++counters_.captures;
    it = graphs_.emplace(key, std::move(captured)).first;
  }
  it->second.indices.copy_(slice, /*non_blocking=*/true);
  it->second.graph->replay();
  ++counters_.replayed_steps;
  return true;
}

ClientUpdate DeviceTrainer::train(ClientAlgorithm& algorithm, const PackedObjective* objective, const Dataset& data,
                                  const std::vector<std::int64_t>& indices, const TrainingTask& task_in,
                                  std::uint32_t client_id, Payload& state_in, std::uint64_t seed,
                                  const AugmentConfig& augment) {
  // The algorithm sees its payload and state where the model is, as in train_locally.
  std::optional<PhaseScope> phase(std::in_place, "gpu job: begin (weights in)");
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
          ? StepLoss([this, mu](const torch::Tensor& y, const ModelOutput& out, const torch::Tensor& weights) {
              return state_.objective_loss(y, out, mu, weights);
            })
          : StepLoss([&](const torch::Tensor& y, const ModelOutput& out, const torch::Tensor&) {
              return algorithm.loss(y, out, ctx);
            });
  const auto schedule =
      batch_schedule(indices, task.hyper, client_id, task.round, seed, pass_steps_before(task.hyper, state));
  phase.emplace("gpu job: launch steps");
  const auto seen = run_steps(ctx, algorithm, schedule, loss, mu, loss_owner, augment,
                              padding_for(task, schedule, own_objective, augment));

  phase.emplace("gpu job: wait, weights out");
  std::vector<torch::Tensor> sums;
  auto weights = state_to_cpu(model_, device_, state_.sums(), sums);
  phase.emplace("gpu job: end");
  const auto totals = StepState::totals_of(sums);
  if (totals.first_bad >= 0)
    throw TrainingError(non_finite_loss_message(client_id, task.round, totals.bad_value, totals.first_bad));
  const auto steps = static_cast<std::uint32_t>(schedule.steps.size());
  record_pass_steps(task.hyper, state, steps);
  auto update = job_update(task, client_id, indices.size(), steps, seen, totals.loss, totals.correct);
  update.weights = std::move(weights);
  algorithm.end(ctx, update);
  update.payload = payload_on(update.payload, torch::kCPU);
  state_in = payload_on(state, torch::kCPU);
  return update;
}

std::uint64_t DeviceTrainer::run_steps(ClientContext& ctx, ClientAlgorithm& algorithm, const BatchSchedule& schedule,
                                       const StepLoss& loss, double mu, const ClientAlgorithm* loss_owner,
                                       const AugmentConfig& augment, std::int64_t pad_to) {
  const auto& data = *ctx.data;
  const auto& hp = ctx.task.hyper;
  std::vector<std::int64_t> starts;
  const auto all = upload_indices(flat_indices(schedule, pad_to, starts), data.images.device());
  const auto black = augment.enabled() ? data.black() : torch::Tensor();
  if (!schedule.steps.empty()) ctx.last_epoch = schedule.steps.back().epoch;
  std::optional<SyncsForbidden> no_waits;
  if (options_.forbid_syncs) no_waits.emplace();
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
    const auto& step = schedule.steps[i];
    ctx.epoch = step.epoch;
    seen += static_cast<std::uint64_t>(step.size);
    const StepSettings settings{pad_to > 0 ? pad_to : step.size, hp.momentum, hp.weight_decay, hp.grad_clip, mu};
    const auto batch = all.narrow(0, starts[i], pad_to > 0 ? 2 * pad_to : step.size);
    ctx.inputs = nullptr;  // a captured loss reads no batch of the host's
    if (const auto key = graph_key(ctx, settings, loss_owner, augment, pad_to > 0);
        !key || !replay(data, batch, *key, loss))
      eager_step(ctx, step, batch, black, loss, settings, augment, pad_to);
    torch::NoGradGuard no_grad;
    algorithm.after_step(ctx);
  }
  return seen;
}

void DeviceTrainer::eager_step(ClientContext& ctx, const BatchSchedule::Step& step, const torch::Tensor& batch,
                               const torch::Tensor& black, const StepLoss& loss, const StepSettings& settings,
                               const AugmentConfig& augment, std::int64_t pad_to) {
  ++counters_.eager_steps;
  const auto& data = *ctx.data;
  if (pad_to > 0) {
    step_on(data, batch, pad_to, loss, settings);
    return;
  }
  auto x = data.images.index_select(0, batch);
  const auto y = data.labels.index_select(0, batch);
  if (augment.enabled()) {
    Rng draws = make_stream(ctx.seed, "augment", {ctx.client_id, ctx.task.round, step.epoch, step.number});
    x = augment_batch(x, augment, black, draws);
  }
  ctx.inputs = &x;
  state_.step(x, y, loss, settings);
}

}  // namespace drift
