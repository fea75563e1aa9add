#include "engine/training/local_training.hpp"

#include <algorithm>
#include <cmath>

#include "engine/training/batch_schedule.hpp"
#include "engine/training/device_transfer.hpp"
#include "engine/training/job_sums.hpp"

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

ClientContext begin_client(Model& model, ClientAlgorithm& algorithm, const Dataset& data,
                           const std::vector<std::int64_t>& indices, const TrainingTask& task, std::uint32_t client_id,
                           Payload& state, std::uint64_t seed, const torch::Device& device) {
  if (!task.weights.empty()) load_state_on_device(model, task.weights, device);
  model.train();
  ClientContext ctx{client_id, task, state, model, &data, &indices};
  ctx.device = device;
  ctx.seed = seed;
  algorithm.begin(ctx);
  return ctx;
}

ClientUpdate job_update(const TrainingTask& task, std::uint32_t client_id, std::uint64_t num_samples,
                        std::uint32_t steps, std::uint64_t seen, double loss_sum, std::int64_t correct) {
  ClientUpdate update;
  update.client_id = client_id;
  update.round = task.round;
  update.model_version = task.model_version;
  update.num_samples = num_samples;
  update.metrics.loss = seen ? loss_sum / static_cast<double>(seen) : 0.0;
  update.metrics.accuracy = seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
  update.metrics.steps = steps;
  update.metrics.samples_seen = seen;
  return update;
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

  auto ctx = begin_client(model, algorithm, data, indices, task, client_id, state, seed, device);

  const auto& hp = task.hyper;
  auto trained = model.parameters();
  for (auto& t : algorithm.extra_parameters()) trained.push_back(t);
  torch::optim::SGD optimizer(
      trained, torch::optim::SGDOptions(hp.learning_rate).momentum(hp.momentum).weight_decay(hp.weight_decay));
  const auto n = static_cast<std::int64_t>(indices.size());
  JobSums sums(1, device);
  const auto row = torch::zeros({1}, torch::TensorOptions().dtype(torch::kInt64).device(device));
  std::uint64_t seen = 0;
  std::uint32_t steps = 0;
  const auto schedule = batch_schedule(indices, hp, client_id, task.round, seed, pass_steps_before(hp, state));
  const BatchSource source{&data, device,    &augment, augment.enabled() ? data.black() : torch::Tensor(),
                           seed,  task.round};
  if (!schedule.steps.empty()) ctx.last_epoch = schedule.steps.back().epoch;
  for (const auto& step : schedule.steps) {
    ctx.epoch = step.epoch;
    auto [x, y] = scheduled_batch(source, schedule, step, client_id);
    optimizer.zero_grad();
    ctx.inputs = &x;
    auto out = model.forward(x);
    auto loss = algorithm.loss(y, out, ctx);
    loss.backward();
    if (hp.grad_clip > 0.0) torch::nn::utils::clip_grad_norm_(trained, hp.grad_clip);
    optimizer.step();
    {
      torch::NoGradGuard no_grad;
      algorithm.after_step(ctx);
    }
    sums.add(row, loss.view({1}), out.logits.argmax(1).eq(y).sum().view({1}), step.size, steps);
    seen += static_cast<std::uint64_t>(step.size);
    ++steps;
  }
  const auto totals = sums.read();
  if (totals.first_bad[0] >= 0)
    throw TrainingError(non_finite_loss_message(client_id, task.round, totals.bad_value[0], totals.first_bad[0]));

  record_pass_steps(hp, state, steps);
  auto update =
      job_update(task, client_id, static_cast<std::uint64_t>(n), steps, seen, totals.loss[0], totals.correct[0]);
  update.weights = state_of(model);
  if (moved)
    for (auto& t : update.weights) t.value = t.value.to(torch::kCPU);
  algorithm.end(ctx, update);
  if (moved) {
    update.payload = payload_on(update.payload, torch::kCPU);
    state_on_cpu = payload_on(state, torch::kCPU);
  }
  return update;
}

EvalResult evaluate_range(Model& model, const Dataset& test, std::uint64_t begin, std::uint64_t end,
                          std::int64_t batch_size, const torch::Device& device, bool per_sample) {
  torch::NoGradGuard no_grad;
  model.eval();
  // Sums stay on the device until the last batch, and nothing in the loop reads a value back
  // (no masked_select or bincount, whose output sizes the host must learn): one wait per range.
  const auto classes = test.num_classes;
  const auto on_device = torch::TensorOptions().device(device);
  auto loss_sum = torch::zeros({}, on_device.dtype(torch::kFloat64));
  auto count = torch::zeros({classes}, on_device.dtype(torch::kInt64));
  auto correct = torch::zeros({classes}, on_device.dtype(torch::kInt64));
  const auto class_ids = torch::arange(classes, on_device.dtype(torch::kInt64));
  std::vector<torch::Tensor> hits;  // per batch, when asked: each sample's hit as a byte
  for (auto start = static_cast<std::int64_t>(begin); start < static_cast<std::int64_t>(end); start += batch_size) {
    const auto stop = std::min<std::int64_t>(start + batch_size, static_cast<std::int64_t>(end));
    auto y = test.labels.slice(0, start, stop).to(device);
    auto logits = model.forward(test.images.slice(0, start, stop).to(device)).logits;
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .to(torch::kFloat64);
    // Per class, as bincount counts: integers, so the order of the sum changes no bit.
    const auto of_class = y.unsqueeze(1).eq(class_ids);  // [B, classes]
    count += of_class.sum(0);
    const auto right = logits.argmax(1).eq(y);
    correct += of_class.logical_and(right.unsqueeze(1)).sum(0);
    if (per_sample) hits.push_back(right.to(torch::kUInt8));
  }
  std::vector<torch::Tensor> sums{loss_sum, count, correct};
  if (per_sample) sums.push_back(hits.empty() ? torch::zeros({0}, on_device.dtype(torch::kUInt8)) : torch::cat(hits));
  const auto host = download(sums, device);
  EvalResult r;
  r.begin = begin;
  r.end = end;
  r.loss_sum = host[0].item<double>();
  auto to_counts = [](const torch::Tensor& t) {
    const auto cpu = t.contiguous();
    const auto* p = cpu.data_ptr<std::int64_t>();
    return std::vector<std::uint64_t>(p, p + cpu.numel());
  };
  r.count = to_counts(host[1]);
  r.correct = to_counts(host[2]);
  if (per_sample) {
    const auto bytes = host[3].contiguous();
    r.hits.assign(bytes.data_ptr<std::uint8_t>(), bytes.data_ptr<std::uint8_t>() + bytes.numel());
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
