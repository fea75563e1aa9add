// The trainer GPU slots use (engine/training/device_trainer), run here on the CPU: it trains as
// train_locally does up to float rounding, and a job never inherits anything from the jobs
// before it. tests/test_cuda_training.cpp checks its graphs and its sync-free loop on a GPU.
#include "catch_torch.hpp"

#include "engine/algorithms/algorithm.hpp"
#include "engine/training/device_trainer.hpp"
#include "engine/training/local_training.hpp"
#include "training_fixtures.hpp"

using namespace drift;
using namespace drift::testing;

namespace {

ModelOptions narrow() {
  ModelOptions o;
  o.width = 8;
  return o;
}

std::unique_ptr<ClientAlgorithm> client_of(const std::string& name, double mu = 0) {
  ParamSet params;
  if (name == "fedprox") params.set("mu", mu);
  return find_algorithm(name)->make_client(params);
}

}  // namespace

TEST_CASE("the device trainer trains as train_locally does", "[device_trainer]") {
  // 40 and 21 samples in batches of 16: short last batches of 8 and 5.
  const auto f = random_federation({40, 21}, 3);
  for (const auto* model_name : {"small-cnn", "resnet8"}) {
    for (double mu : {0.0, 0.1}) {
      const std::string algorithm = mu > 0 ? "fedprox" : "fedavg";
      INFO(model_name << " " << algorithm);
      auto reference = make_model(model_name, {1, 28, 28}, 10, 5, narrow());
      auto model = make_model(model_name, {1, 28, 28}, 10, 5, narrow());
      const auto task = sgd_task(*reference, 4, 0.05, 1);
      DeviceTrainer trainer(*model, torch::kCPU, {});
      const PackedObjective objective{mu};
      for (std::uint32_t c = 0; c < 2; ++c) {
        auto client = client_of(algorithm, mu);
        Payload s1, s2;
        const auto alone = train_locally(*reference, *client, f.data, f.indices[c], task, c, s1, 42);
        // With the objective the trainer computes the loss itself; without, through the algorithm.
        const auto own = trainer.train(*client, &objective, f.data, f.indices[c], task, c, s2, 42);
        const auto through = trainer.train(*client, nullptr, f.data, f.indices[c], task, c, s2, 42);
        CHECK(weight_gap(own.weights, alone.weights) < 1e-6);
        CHECK(same_bits(own.weights, through.weights));
        CHECK(own.metrics.steps == alone.metrics.steps);
        CHECK(own.metrics.samples_seen == alone.metrics.samples_seen);
        CHECK(own.metrics.loss == Approx(alone.metrics.loss).epsilon(1e-5));
        CHECK(own.metrics.accuracy == alone.metrics.accuracy);
        CHECK(own.num_samples == alone.num_samples);
        CHECK(own.round == task.round);
      }
      CHECK(trainer.counters().replayed_steps == 0);          // no graphs on a CPU
      CHECK(trainer.counters().eager_steps == 2u * (3 + 2));  // two jobs a client
    }
  }
}

TEST_CASE("a trainer that pads short batches trains as one that does not", "[device_trainer]") {
  // 40 and 21 samples in batches of 16 (short batches of 8 and 5), and 7 samples under
  // local_steps, where every batch is short.
  const auto f = random_federation({40, 21, 7}, 6);
  for (double mu : {0.0, 0.1}) {
    INFO("mu " << mu);
    auto plain_model = make_model("small-cnn", {1, 28, 28}, 10, 5);
    auto padded_model = make_model("small-cnn", {1, 28, 28}, 10, 5);
    DeviceTrainer plain(*plain_model, torch::kCPU, {});
    DeviceTrainer::Options pad;
    pad.pad_short_batches = true;
    pad.largest_client = 40;
    DeviceTrainer padded(*padded_model, torch::kCPU, pad);
    const PackedObjective objective{mu};
    auto client = client_of(mu > 0 ? "fedprox" : "fedavg", mu);
    auto task = sgd_task(*plain_model, 1, 0.05, 2);
    for (std::uint32_t c = 0; c < 3; ++c) {
      INFO("client " << c);
      if (c == 2) task.hyper.local_steps = 3;
      Payload s1, s2;
      const auto a = plain.train(*client, &objective, f.data, f.indices[c], task, c, s1, 42);
      const auto b = padded.train(*client, &objective, f.data, f.indices[c], task, c, s2, 42);
      CHECK(weight_gap(a.weights, b.weights) < 1e-6);
      CHECK(b.metrics.loss == Approx(a.metrics.loss).epsilon(1e-5));
      CHECK(b.metrics.accuracy == a.metrics.accuracy);  // padding rows are never counted
      CHECK(b.metrics.steps == a.metrics.steps);
      CHECK(b.metrics.samples_seen == a.metrics.samples_seen);
    }
    // Through the algorithm's own loss nothing is padded: the same bits as the plain trainer.
    Payload s1, s2;
    const auto a = plain.train(*client, nullptr, f.data, f.indices[1], task, 1, s1, 42);
    const auto b = padded.train(*client, nullptr, f.data, f.indices[1], task, 1, s2, 42);
    CHECK(same_bits(a.weights, b.weights));
  }
}

TEST_CASE("a device trainer's job does not depend on the jobs before it", "[device_trainer]") {
  const auto f = random_federation({40, 21, 7}, 8);
  auto model = make_model("resnet8", {1, 28, 28}, 10, 5, narrow());
  auto fresh_model = make_model("resnet8", {1, 28, 28}, 10, 5, narrow());
  DeviceTrainer used(*model, torch::kCPU, {});
  DeviceTrainer fresh(*fresh_model, torch::kCPU, {});
  const PackedObjective objective{0.1};
  auto client = client_of("fedprox", 0.1);
  Payload state;
  // Another round, learning rate and client first: momentum, sums and the anchor must not leak.
  const auto before = sgd_task(*model, 2, 0.5, 2);
  used.train(*client, &objective, f.data, f.indices[0], before, 0, state, 42);
  used.train(*client, &objective, f.data, f.indices[2], before, 2, state, 42);
  const auto task = sgd_task(*fresh_model, 3, 0.05, 2);
  const auto a = used.train(*client, &objective, f.data, f.indices[1], task, 1, state, 42);
  const auto b = fresh.train(*client, &objective, f.data, f.indices[1], task, 1, state, 42);
  CHECK(same_bits(a.weights, b.weights));
  CHECK(a.metrics.loss == b.metrics.loss);
  CHECK(a.metrics.accuracy == b.metrics.accuracy);
}

TEST_CASE("the device trainer names the step whose loss stopped being finite", "[device_trainer]") {
  auto f = random_federation({40}, 5);
  f.data.images[20].fill_(std::numeric_limits<float>::quiet_NaN());  // in the second batch of 16
  auto reference = make_model("small-cnn", {1, 28, 28}, 10, 5);
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 5);
  auto task = sgd_task(*reference, 1, 0.05, 1);
  task.hyper.local_epochs = 1;
  auto client = client_of("fedavg");
  Payload state;
  std::string expected, got;
  try {
    train_locally(*reference, *client, f.data, f.indices[0], task, 0, state, 42);
  } catch (const TrainingError& e) {
    expected = e.what();
  }
  DeviceTrainer trainer(*model, torch::kCPU, {});
  const PackedObjective objective{};
  try {
    trainer.train(*client, &objective, f.data, f.indices[0], task, 0, state, 42);
  } catch (const TrainingError& e) {
    got = e.what();
  }
  CHECK_FALSE(expected.empty());
  CHECK(got == expected);
}
