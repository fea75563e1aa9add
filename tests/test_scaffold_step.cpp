// SCAFFOLD's local step with momentum, against the reference baselines' rule worked out by hand:
// the optimiser's SGD step (weight decay, momentum, learning rate) on the plain gradient, then
// y <- y - lr (c - c_i) outside it (docs/algorithms.md#scaffold). On zero images the first
// convolution's weights get no gradient from the loss, so every number below is arithmetic.
#include "catch_torch.hpp"

#include "engine/algorithms/scaffold.hpp"
#include "engine/training/device_trainer.hpp"
#include "engine/training/local_training.hpp"
#include "training_fixtures.hpp"

using namespace drift;
using namespace drift::testing;

namespace {

constexpr double kLr = 0.1, kMomentum = 0.9, kDecay = 0.01, kCorrection = 0.2;

struct ScaffoldJob {
  std::shared_ptr<Model> model;
  TrainingTask task;
  Federation f;
  torch::Tensor w0;  // the first convolution's weights before the job
  std::string name;  // ... and their name
};

// Two batches of 16 zero images; the server's c is 0.2 on the first convolution's weights.
ScaffoldJob scaffold_job(double momentum) {
  ScaffoldJob job;
  ModelOptions narrow;
  narrow.width = 8;
  job.model = make_model("small-cnn", {1, 28, 28}, 10, 3, narrow);
  job.f = random_federation({32}, 5);
  job.f.data.images.zero_();
  job.task = sgd_task(*job.model, 1, kLr, 1);
  job.task.hyper.momentum = momentum;
  job.task.hyper.weight_decay = kDecay;
  job.task.hyper.grad_clip = 0.0;
  const auto first = job.model->named_parameters(true)[0];
  job.name = first.key();
  job.w0 = first.value().detach().clone();
  job.task.payload.tensors["c:" + job.name] = torch::full(first.value().sizes(), kCorrection);
  return job;
}

torch::Tensor trained_first(const ClientUpdate& update, const std::string& name) {
  for (const auto& t : update.weights)
    if (t.name == name) return t.value;
  FAIL("no tensor " << name);
  return {};
}

}  // namespace

TEST_CASE("SCAFFOLD with momentum: the correction moves weights after the step, outside the momentum",
          "[algorithms][scaffold]") {
  auto job = scaffold_job(kMomentum);
  // The reference's rule, for two steps whose loss gradient is zero on these weights:
  //   d1 = wd w0, b1 = d1, w1 = w0 - lr b1 - lr c;  d2 = wd w1, b2 = m b1 + d2, w2 = w1 - lr b2 - lr c.
  const auto w0 = job.w0.to(torch::kFloat64);
  const auto b1 = kDecay * w0;
  const auto w1 = w0 - kLr * b1 - kLr * kCorrection;
  const auto b2 = kMomentum * b1 + kDecay * w1;
  const auto expected = w1 - kLr * b2 - kLr * kCorrection;
  // The correction inside the momentum buffer (drift before) would end kLr * kMomentum * c = 0.018 away.
  const auto in_buffer = expected - kLr * kMomentum * kCorrection;

  ScaffoldClient client;
  Payload state;
  const auto alone = train_locally(*job.model, client, job.f.data, job.f.indices[0], job.task, 0, state, 42);
  REQUIRE(alone.metrics.steps == 2);
  const auto got = trained_first(alone, job.name).to(torch::kFloat64);
  CHECK((got - expected).abs().max().item<double>() < 1e-6);
  CHECK((got - in_buffer).abs().min().item<double>() > 0.01);

  // The trainer GPU slots use, run here on the CPU, takes the same step.
  auto fresh = scaffold_job(kMomentum);
  DeviceTrainer trainer(*fresh.model, torch::kCPU, {});
  Payload state2;
  const auto device = trainer.train(client, nullptr, fresh.f.data, fresh.f.indices[0], fresh.task, 0, state2, 42);
  CHECK((trained_first(device, job.name).to(torch::kFloat64) - expected).abs().max().item<double>() < 1e-6);

  // Option II's control variate from x - y: c_i+ = c_i - c + (x - y) / (T lr), the same as without momentum.
  const auto c_i = state.tensors.at("c_i:" + job.name).to(torch::kFloat64);
  CHECK((c_i - (-kCorrection + (w0 - expected) / (2 * kLr))).abs().max().item<double>() < 1e-4);
}

TEST_CASE("SCAFFOLD without momentum: one step of gradient, weight decay and correction together",
          "[algorithms][scaffold]") {
  auto job = scaffold_job(0.0);
  const auto w0 = job.w0.to(torch::kFloat64);
  const auto w1 = w0 - kLr * (kDecay * w0 + kCorrection);
  const auto expected = w1 - kLr * (kDecay * w1 + kCorrection);
  ScaffoldClient client;
  Payload state;
  const auto alone = train_locally(*job.model, client, job.f.data, job.f.indices[0], job.task, 0, state, 42);
  CHECK((trained_first(alone, job.name).to(torch::kFloat64) - expected).abs().max().item<double>() < 1e-6);
}
