#include "engine/training/local_training.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/rng.hpp"
#include "engine/data/augment.hpp"

namespace drift {

Payload payload_on(const Payload& payload, const torch::Device& device) {
  Payload out;
  for (const auto& [k, t] : payload.tensors) out.tensors[k] = t.to(device);
  for (const auto& [k, per_class] : payload.class_vectors)
    for (const auto& [c, t] : per_class) out.class_vectors[k][c] = t.to(device);
  out.scalars = payload.scalars;
  return out;
}

ClientUpdate train_locally(Model& model, ClientAlgorithm& algorithm, const Dataset& data,
                           const std::vector<std::int64_t>& indices, const TrainingTask& task_on_cpu,
                           std::uint32_t client_id, Payload& state_on_cpu, std::uint64_t seed,
                           const torch::Device& device, const AugmentConfig& augment) {
  // Off the CPU, the algorithm sees its payload and state where the model is.
  const bool moved = !device.is_cpu();
  TrainingTask task_copy;
  Payload state_copy;
  if (moved) {
    task_copy = task_on_cpu;  // tensor handles: the weights are not copied
    task_copy.payload = payload_on(task_on_cpu.payload, device);
    state_copy = payload_on(state_on_cpu, device);
  }
  const TrainingTask& task = moved ? task_copy : task_on_cpu;
  Payload& state = moved ? state_copy : state_on_cpu;

  // No weights in the task: the model already holds the client's own (private models).
  if (!task.weights.empty()) load_state(model, task.weights);
  model.train();
  ClientContext ctx{client_id, task, state, model, &data, &indices};
  ctx.device = device;
  ctx.seed = seed;
  algorithm.begin(ctx);

  const auto& hp = task.hyper;
  auto trained = model.parameters();
  for (auto& t : algorithm.extra_parameters()) trained.push_back(t);
  torch::optim::SGD optimizer(trained, torch::optim::SGDOptions(hp.learning_rate)
                                                      .momentum(hp.momentum)
                                                      .weight_decay(hp.weight_decay));
  const auto n = static_cast<std::int64_t>(indices.size());
  const std::int64_t batch = hp.batch_size;
  double loss_sum = 0.0;
  std::uint64_t correct = 0, seen = 0;
  std::uint32_t steps = 0;

  std::vector<std::int64_t> order = indices;
  const auto black = augment.enabled() ? data.black() : torch::Tensor();
  for (std::uint32_t epoch = 0; epoch < hp.local_epochs; ++epoch) {
    ctx.epoch = epoch;
    order = indices;
    Rng rng = make_stream(seed, "batch-order", {client_id, task.round, epoch});
    rng.shuffle(order);
    for (std::int64_t start = 0; start < n; start += batch) {
      const std::int64_t size = std::min(batch, n - start);
      if (hp.drop_last && size < batch) break;
      auto idx = torch::from_blob(order.data() + start, {size}, torch::kInt64);
      auto x = data.images.index_select(0, idx).to(device);
      auto y = data.labels.index_select(0, idx).to(device);
      if (augment.enabled()) {
        Rng draws = make_stream(seed, "augment", {client_id, task.round, epoch, static_cast<std::uint64_t>(start / batch)});
        x = augment_batch(x, augment, black, draws);
      }

      optimizer.zero_grad();
      ctx.inputs = &x;
      auto out = model.forward(x);
      auto loss = algorithm.loss(y, out, ctx);
      const double value = loss.item<double>();
      if (!std::isfinite(value)) {
        throw TrainingError("client " + std::to_string(client_id) + " round " + std::to_string(task.round) +
                            ": training loss became " + std::to_string(value) + " at local step " +
                            std::to_string(steps));
      }
      loss.backward();
      if (hp.grad_clip > 0.0) torch::nn::utils::clip_grad_norm_(trained, hp.grad_clip);
      optimizer.step();

      loss_sum += value * static_cast<double>(size);
      correct += static_cast<std::uint64_t>(out.logits.argmax(1).eq(y).sum().item<std::int64_t>());
      seen += static_cast<std::uint64_t>(size);
      ++steps;
    }
  }

  ClientUpdate update;
  update.client_id = client_id;
  update.round = task.round;
  update.model_version = task.model_version;
  update.num_samples = static_cast<std::uint64_t>(n);
  update.weights = state_of(model);
  if (moved)
    for (auto& t : update.weights) t.value = t.value.to(torch::kCPU);
  update.metrics.loss = seen ? loss_sum / static_cast<double>(seen) : 0.0;
  update.metrics.accuracy = seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
  update.metrics.steps = steps;
  update.metrics.samples_seen = seen;
  algorithm.end(ctx, update);
  if (moved) {
    update.payload = payload_on(update.payload, torch::kCPU);
    state_on_cpu = payload_on(state, torch::kCPU);
  }
  return update;
}

EvalResult evaluate_range(Model& model, const Dataset& test, std::uint64_t begin, std::uint64_t end,
                          std::int64_t batch_size, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  model.eval();
  EvalResult r;
  r.begin = begin;
  r.end = end;
  r.correct.assign(static_cast<std::size_t>(test.num_classes), 0);
  r.count.assign(static_cast<std::size_t>(test.num_classes), 0);
  for (auto start = static_cast<std::int64_t>(begin); start < static_cast<std::int64_t>(end); start += batch_size) {
    const auto stop = std::min<std::int64_t>(start + batch_size, static_cast<std::int64_t>(end));
    auto x = test.images.slice(0, start, stop);
    auto y = test.labels.slice(0, start, stop);
    auto logits = model.forward(x.to(device)).logits;
    r.loss_sum += torch::nn::functional::cross_entropy(
                      logits, y.to(device), torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                      .item<double>();
    auto hit = logits.argmax(1).to(torch::kCPU).eq(y);
    auto y_acc = y.accessor<std::int64_t, 1>();
    auto hit_acc = hit.accessor<bool, 1>();
    for (std::int64_t i = 0; i < y.size(0); ++i) {
      const auto c = static_cast<std::size_t>(y_acc[i]);
      ++r.count[c];
      if (hit_acc[i]) ++r.correct[c];
    }
  }
  return r;
}

std::vector<std::uint64_t> domain_starts(const Dataset& test) {
  std::vector<std::uint64_t> starts;
  if (!test.domains.defined() || test.domain_names.empty()) return starts;
  const auto* d = test.domains.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < test.size(); ++i)
    if (i == 0 || d[i] != d[i - 1]) starts.push_back(static_cast<std::uint64_t>(i));
  return starts;
}

}  // namespace drift
