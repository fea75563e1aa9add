// The device trainer on a GPU: steps replayed from CUDA graphs give the bits of eager steps, and
// no step of a job makes the host wait (LibTorch's sync debug mode set to error around the step
// loop). Its own executable, which exits 77 (CTest: skipped) where there is no GPU, so that CI,
// which has none, reports it as skipped rather than passed.
#define CATCH_CONFIG_RUNNER
#include "catch_torch.hpp"

#include <iostream>

#include "engine/algorithms/algorithm.hpp"
#include "engine/training/cuda_support.hpp"
#include "engine/training/device_data.hpp"
#include "engine/training/device_trainer.hpp"
#include "training_fixtures.hpp"

using namespace drift;
using namespace drift::testing;

namespace {

const torch::Device gpu("cuda:0");

// Trains every client for `rounds` rounds, one job each, on a graph trainer and on an eager one
// (each with a model of its own), and checks the two give the same bits job after job.
DeviceTrainer::Counters compare(const std::string& model_name, const std::string& algorithm, double mu,
                                std::uint32_t rounds) {
  // Clients 0 and 2, and 1 and 3, have batches of the same shapes, so later jobs replay graphs
  // that earlier ones captured; 40 and 21 leave short last batches of 8 and 5.
  const auto f = random_federation({40, 21, 40, 21, 7}, 3, gpu);
  ModelOptions options;
  options.width = 8;
  auto reference = make_model(model_name, {1, 28, 28}, 10, 5, options);
  auto graph_model = make_model(model_name, {1, 28, 28}, 10, 5, options);
  auto eager_model = make_model(model_name, {1, 28, 28}, 10, 5, options);
  graph_model->to(gpu);
  eager_model->to(gpu);
  DeviceTrainer graphs(*graph_model, gpu, {true, false});
  DeviceTrainer eager(*eager_model, gpu, {false, false});
  ParamSet params;
  if (algorithm == "fedprox") params.set("mu", mu);
  auto client = find_algorithm(algorithm)->make_client(params);
  const PackedObjective objective{mu};
  for (std::uint32_t r = 1; r <= rounds; ++r) {
    // A learning rate of its own each round: the graphs read it from the device.
    const auto task = sgd_task(*reference, r, 0.1 / r, 2);
    for (std::uint32_t c = 0; c < f.indices.size(); ++c) {
      INFO(model_name << " " << algorithm << " round " << r << " client " << c);
      Payload s1, s2;
      const auto a = graphs.train(*client, &objective, f.data, f.indices[c], task, c, s1, 42);
      const auto b = eager.train(*client, &objective, f.data, f.indices[c], task, c, s2, 42);
      CHECK(same_bits(a.weights, b.weights));
      CHECK(a.metrics.loss == b.metrics.loss);
      CHECK(a.metrics.accuracy == b.metrics.accuracy);
    }
  }
  CHECK(eager.counters().replayed_steps == 0);
  CHECK(graphs.counters().failed_captures == 0);
  return graphs.counters();
}

}  // namespace

TEST_CASE("steps replayed from CUDA graphs give the bits of eager steps", "[cuda]") {
  for (const auto* model_name : {"small-cnn", "resnet8"}) {
    const auto fedavg = compare(model_name, "fedavg", 0, 2);
    CHECK(fedavg.captures > 0);
    CHECK(fedavg.replayed_steps > fedavg.eager_steps);
    const auto fedprox = compare(model_name, "fedprox", 0.1, 2);
    CHECK(fedprox.replayed_steps > fedprox.eager_steps);
  }
}

TEST_CASE("the sync check catches a host wait", "[cuda]") {
  const auto t = torch::ones({1}, gpu);
  const SyncsForbidden forbidden;
  CHECK_THROWS(t.item<float>());
}

TEST_CASE("no step of a job makes the host wait", "[cuda]") {
  const auto f = random_federation({40, 21, 40}, 4, gpu);
  auto reference = make_model("small-cnn", {1, 28, 28}, 10, 5);
  for (bool graphs : {true, false}) {
    INFO((graphs ? "graphs" : "eager"));
    auto model = make_model("small-cnn", {1, 28, 28}, 10, 5);
    model->to(gpu);
    DeviceTrainer trainer(*model, gpu, {graphs, /*forbid_syncs=*/true});
    auto client = find_algorithm("fedprox")->make_client(ParamSet{});
    const PackedObjective objective{0.01};
    for (std::uint32_t r = 1; r <= 2; ++r) {
      const auto task = sgd_task(*reference, r, 0.05, 1);
      for (std::uint32_t c = 0; c < f.indices.size(); ++c) {
        Payload state;
        CHECK_NOTHROW(trainer.train(*client, &objective, f.data, f.indices[c], task, c, state, 42));
        // Through the algorithm's own loss (cross-entropy here), eagerly.
        auto fedavg = find_algorithm("fedavg")->make_client(ParamSet{});
        CHECK_NOTHROW(trainer.train(*fedavg, nullptr, f.data, f.indices[c], task, c, state, 42));
      }
    }
    if (graphs) CHECK(trainer.counters().replayed_steps > 0);
  }
}

int main(int argc, char** argv) {
  if (!torch::cuda::is_available()) {
    std::cout << "skipped: this LibTorch has no CUDA or no GPU is visible\n";
    return 77;
  }
  // As a GPU run sets them up: deterministic kernels, and a stream of the thread's own (a
  // capture cannot use the default stream).
  use_deterministic_kernels({DeviceSlots{gpu, 1}});
  use_own_stream(gpu);
  use_blocking_waits(gpu);
  return Catch::Session().run(argc, argv);
}
