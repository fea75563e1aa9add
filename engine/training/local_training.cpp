#include "engine/training/local_training.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/rng.hpp"
#include "engine/data/augment.hpp"
#include "engine/training/batch_schedule.hpp"
#include "engine/training/device_data.hpp"

namespace drift {

Payload payload_on(const Payload& payload, const torch::Device& device) {
  Payload out;
  for (const auto& [k, t] : payload.tensors) out.tensors[k] = t.to(device);
  for (const auto& [k, per_class] : payload.class_vectors)
    for (const auto& [c, t] : per_class) out.class_vectors[k][c] = t.to(device);
  out.scalars = payload.scalars;
  return out;
}

std::string non_finite_loss_message(std::uint32_t client_id, std::uint32_t round, double value, std::int64_t step) {
  return "client " + std::to_string(client_id) + " round " + std::to_string(round) + ": training loss became " +
         std::to_string(value) + " at local step " + std::to_string(step);
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
  // The loss and the hits are summed on the device and read once after the last step: a read
  // per step would make the host wait for the device at every batch.
  const auto on_device = torch::TensorOptions().device(device);
  auto loss_sum = torch::zeros({}, on_device.dtype(torch::kFloat64));
  auto correct = torch::zeros({}, on_device.dtype(torch::kInt64));
  auto first_bad = torch::full({}, -1, on_device.dtype(torch::kInt64));  // the first step with a non-finite loss
  auto bad_value = torch::zeros({}, on_device.dtype(torch::kFloat64));
  std::uint64_t seen = 0;
  std::uint32_t steps = 0;

  const auto schedule = batch_schedule(indices, hp, client_id, task.round, seed);
  const auto black = augment.enabled() ? data.black() : torch::Tensor();
  for (const auto& step : schedule.steps) {
    ctx.epoch = step.epoch;
    auto idx = indices_for(data, torch::from_blob(const_cast<std::int64_t*>(schedule.indices(step)), {step.size}, torch::kInt64));
    auto x = data.images.index_select(0, idx).to(device);
    auto y = data.labels.index_select(0, idx).to(device);
    if (augment.enabled()) {
      Rng draws = make_stream(seed, "augment", {client_id, task.round, step.epoch, step.number});
      x = augment_batch(x, augment, black, draws);
    }

    optimizer.zero_grad();
    ctx.inputs = &x;
    auto out = model.forward(x);
    auto loss = algorithm.loss(y, out, ctx);
    loss.backward();
    if (hp.grad_clip > 0.0) torch::nn::utils::clip_grad_norm_(trained, hp.grad_clip);
    optimizer.step();

    torch::NoGradGuard no_grad;
    const auto value = loss.detach().to(torch::kFloat64);
    const auto bad = torch::logical_and(first_bad.lt(0), torch::logical_not(torch::isfinite(value)));
    first_bad = torch::where(bad, torch::full_like(first_bad, static_cast<std::int64_t>(steps)), first_bad);
    bad_value = torch::where(bad, value, bad_value);
    loss_sum += value * static_cast<double>(step.size);
    correct += out.logits.argmax(1).eq(y).sum();
    seen += static_cast<std::uint64_t>(step.size);
    ++steps;
  }
  if (const auto at = first_bad.item<std::int64_t>(); at >= 0)
    throw TrainingError(non_finite_loss_message(client_id, task.round, bad_value.item<double>(), at));

  ClientUpdate update;
  update.client_id = client_id;
  update.round = task.round;
  update.model_version = task.model_version;
  update.num_samples = static_cast<std::uint64_t>(n);
  update.weights = state_of(model);
  if (moved)
    for (auto& t : update.weights) t.value = t.value.to(torch::kCPU);
  update.metrics.loss = seen ? loss_sum.item<double>() / static_cast<double>(seen) : 0.0;
  update.metrics.accuracy = seen ? static_cast<double>(correct.item<std::int64_t>()) / static_cast<double>(seen) : 0.0;
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
  // Sums stay on the device until the last batch: one read per range, not two per batch.
  const auto classes = test.num_classes;
  const auto on_device = torch::TensorOptions().device(device);
  auto loss_sum = torch::zeros({}, on_device.dtype(torch::kFloat64));
  auto count = torch::zeros({classes}, on_device.dtype(torch::kInt64));
  auto correct = torch::zeros({classes}, on_device.dtype(torch::kInt64));
  for (auto start = static_cast<std::int64_t>(begin); start < static_cast<std::int64_t>(end); start += batch_size) {
    const auto stop = std::min<std::int64_t>(start + batch_size, static_cast<std::int64_t>(end));
    auto y = test.labels.slice(0, start, stop).to(device);
    auto logits = model.forward(test.images.slice(0, start, stop).to(device)).logits;
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .to(torch::kFloat64);
    count += torch::bincount(y, {}, classes);
    correct += torch::bincount(y.masked_select(logits.argmax(1).eq(y)), {}, classes);
  }
  EvalResult r;
  r.begin = begin;
  r.end = end;
  r.loss_sum = loss_sum.item<double>();
  auto to_counts = [](const torch::Tensor& t) {
    const auto cpu = t.to(torch::kCPU).contiguous();
    const auto* p = cpu.data_ptr<std::int64_t>();
    return std::vector<std::uint64_t>(p, p + cpu.numel());
  };
  r.count = to_counts(count);
  r.correct = to_counts(correct);
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
