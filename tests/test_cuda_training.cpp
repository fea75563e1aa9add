// The device trainer on a GPU: steps replayed from CUDA graphs give the bits of eager steps (the
// trainer's own objective and FedSKC's loss), and no step of a job makes the host wait
// (LibTorch's sync debug mode set to error around the step loop), nor any step of a pack. Its own executable, which
// exits 77 (CTest: skipped) where there is no GPU, so that CI, which has none, reports it as skipped rather than
// passed.
#define CATCH_CONFIG_RUNNER
#include "catch_torch.hpp"

#include <iostream>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/fedskc.hpp"
#include "engine/training/cpu_arithmetic.hpp"
#include "engine/training/cuda_support.hpp"
#include "engine/training/device_data.hpp"
#include "engine/training/device_trainer.hpp"
#include "engine/training/pack_stepper.hpp"
#include "engine/training/packed_training.hpp"
#include "training_fixtures.hpp"

using namespace drift;
using namespace drift::testing;

namespace {

const torch::Device gpu("cuda:0");

// Trains every client for `rounds` rounds, one job each, on a graph trainer and on an eager one
// (each with a model of its own), and checks the two give the same bits job after job.
DeviceTrainer::Counters compare(const std::string& model_name, const std::string& algorithm, double mu,
                                std::uint32_t rounds, bool pad = false, ModelOptions options = {}) {
  // Clients 0 and 2, and 1 and 3, have batches of the same shapes, so later jobs replay graphs
  // that earlier ones captured; 40 and 21 leave short last batches of 8 and 5.
  const auto f = random_federation({40, 21, 40, 21, 7}, 3, gpu);
  if (options.script_file.empty()) options.width = 8;
  auto reference = make_model(model_name, {1, 28, 28}, 10, 5, options);
  auto graph_model = make_model(model_name, {1, 28, 28}, 10, 5, options);
  auto eager_model = make_model(model_name, {1, 28, 28}, 10, 5, options);
  graph_model->to(gpu);
  eager_model->to(gpu);
  DeviceTrainer::Options graph_options, eager_options;
  graph_options.pad_short_batches = eager_options.pad_short_batches = pad;
  eager_options.graphs = false;
  DeviceTrainer graphs(*graph_model, gpu, graph_options);
  DeviceTrainer eager(*eager_model, gpu, eager_options);
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

// A FedSKC task of round `round`: knowledge for the first `classes` classes (none: round 1).
TrainingTask skc_task(const Model& reference, std::uint32_t round, std::uint32_t classes) {
  auto task = sgd_task(reference, round, 0.05, 2);
  torch::manual_seed(round);
  for (std::uint32_t c = 0; c < classes; ++c) task.payload.class_vectors["knowledge"][c] = torch::randn({1, 10});
  return task;
}

bool same_knowledge(const ClientUpdate& a, const ClientUpdate& b) {
  const auto& x = a.payload.class_vectors;
  const auto& y = b.payload.class_vectors;
  if (x.size() != y.size() || x.count("knowledge") != y.count("knowledge")) return false;
  if (x.empty()) return true;
  const auto& kx = x.at("knowledge");
  const auto& ky = y.at("knowledge");
  if (kx.size() != ky.size()) return false;
  for (const auto& [c, v] : kx)
    if (ky.count(c) == 0 || !torch::equal(v, ky.at(c))) return false;
  return kx.size() > 0;
}

// FedSKC's own loss (LCL against the round's knowledge, U by each normalization, the warm-up's
// weight, means collected in the last epoch), on a graph trainer and an eager one.
DeviceTrainer::Counters compare_fedskc(fedskc::Normalization normalization) {
  const auto f = random_federation({40, 21, 40, 21}, 5, gpu);
  auto reference = make_model("resnet8", {1, 28, 28}, 10, 5, ModelOptions{});
  auto graph_model = make_model("resnet8", {1, 28, 28}, 10, 5, ModelOptions{});
  auto eager_model = make_model("resnet8", {1, 28, 28}, 10, 5, ModelOptions{});
  graph_model->to(gpu);
  eager_model->to(gpu);
  DeviceTrainer graphs(*graph_model, gpu, {true, false});
  DeviceTrainer eager(*eager_model, gpu, {false, false});
  fedskc::ClientOptions o;
  o.warmup_rounds = 3;
  o.normalization = normalization;
  o.knowledge_pass = KnowledgePass::last_epoch;
  o.positive_twice = o.self_positive = true;
  fedskc::Client graph_client(o), eager_client(o);
  // Round 1 has no knowledge, round 2 knowledge of 7 classes, rounds 3 and 4 of all 10.
  const std::uint32_t known[] = {0, 7, 10, 10};
  for (std::uint32_t r = 1; r <= 4; ++r) {
    const auto task = skc_task(*reference, r, known[r - 1]);
    for (std::uint32_t c = 0; c < f.indices.size(); ++c) {
      INFO("fedskc round " << r << " client " << c);
      Payload s1, s2;
      const auto a = graphs.train(graph_client, nullptr, f.data, f.indices[c], task, c, s1, 42);
      const auto b = eager.train(eager_client, nullptr, f.data, f.indices[c], task, c, s2, 42);
      CHECK(same_bits(a.weights, b.weights));
      CHECK(a.metrics.loss == b.metrics.loss);
      CHECK(same_knowledge(a, b));
    }
  }
  CHECK(graphs.counters().failed_captures == 0);
  return graphs.counters();
}

}  // namespace

TEST_CASE("FedSKC's steps replayed from CUDA graphs give the bits of eager steps", "[cuda]") {
  for (const auto n : {fedskc::Normalization::none, fedskc::Normalization::batch, fedskc::Normalization::dataset}) {
    INFO("normalization " << static_cast<int>(n));
    const auto counters = compare_fedskc(n);
    CHECK(counters.captures > 0);
    CHECK(counters.replayed_steps > counters.eager_steps);
  }
}

TEST_CASE("steps replayed from CUDA graphs give the bits of eager steps", "[cuda]") {
  for (const auto* model_name : {"small-cnn", "resnet8"}) {
    const auto fedavg = compare(model_name, "fedavg", 0, 2);
    CHECK(fedavg.captures > 0);
    CHECK(fedavg.replayed_steps > fedavg.eager_steps);
    const auto fedprox = compare(model_name, "fedprox", 0.1, 2);
    CHECK(fedprox.replayed_steps > fedprox.eager_steps);
  }
}

// A program torch.export wrote runs its graph through the dispatcher on the GPU as on the CPU,
// and its steps are captured and replayed like the built-in models' (docs/models.md).
TEST_CASE("an exported program's steps replayed from CUDA graphs give the bits of eager steps", "[cuda]") {
  ModelOptions options;
  options.script_file = DRIFT_SOURCE_DIR "/docs/examples/exported/resnet8.pt2";
  options.script_weights = false;
  const auto counters = compare("exported", "fedavg", 0, 2, false, options);
  CHECK(counters.captures > 0);
  CHECK(counters.replayed_steps > counters.eager_steps);
}

TEST_CASE("padded short batches make every step one graph, with the bits of eager steps", "[cuda]") {
  for (const auto* algorithm : {"fedavg", "fedprox"}) {
    INFO(algorithm);
    const auto counters = compare("small-cnn", algorithm, std::string(algorithm) == "fedprox" ? 0.1 : 0.0, 2, true);
    CHECK(counters.captures == 1);     // the full batch's shape, which every padded batch has
    CHECK(counters.eager_steps == 1);  // the warm-up before it
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
    DeviceTrainer::Options options;
    options.graphs = graphs;
    options.forbid_syncs = true;
    options.pad_short_batches = graphs;  // padded batches with graphs, plain ones eagerly
    DeviceTrainer trainer(*model, gpu, options);
    auto client = find_algorithm("fedprox")->make_client(ParamSet{});
    fedskc::ClientOptions skc_options;
    skc_options.knowledge_pass = KnowledgePass::last_epoch;
    fedskc::Client fedskc(skc_options);
    const PackedObjective objective{0.01};
    for (std::uint32_t r = 1; r <= 2; ++r) {
      const auto task = sgd_task(*reference, r, 0.05, 1);
      for (std::uint32_t c = 0; c < f.indices.size(); ++c) {
        Payload state;
        CHECK_NOTHROW(trainer.train(*client, &objective, f.data, f.indices[c], task, c, state, 42));
        // Through the algorithm's own loss (cross-entropy here), eagerly.
        auto fedavg = find_algorithm("fedavg")->make_client(ParamSet{});
        CHECK_NOTHROW(trainer.train(*fedavg, nullptr, f.data, f.indices[c], task, c, state, 42));
        // Through FedSKC's, which captures.
        CHECK_NOTHROW(trainer.train(fedskc, nullptr, f.data, f.indices[c], skc_task(*reference, r, 10), c, state, 42));
      }
    }
    if (graphs) CHECK(trainer.counters().replayed_steps > 0);
  }
}

TEST_CASE("no step of a pack job makes the host wait, padded or in size groups", "[cuda]") {
  // Members that leave the pack's steps at different times, with short last batches.
  const auto f = random_federation({40, 21, 40, 3}, 4, gpu);
  auto prototype = make_model("small-cnn", {1, 28, 28}, 10, 5);
  const auto task = sgd_task(*prototype, 1, 0.05, 2);
  std::vector<PackMember> members;
  for (std::uint32_t c = 0; c < f.indices.size(); ++c) members.push_back({c, &f.indices[c]});
  for (std::int64_t pad_to : {0, 16}) {
    INFO("padded to " << pad_to);
    PackOptions options;
    options.pad_to = pad_to;
    options.forbid_syncs = true;
    std::vector<PackOutcome> out;
    CHECK_NOTHROW(out = train_packed(*prototype, PackedObjective{0.01}, f.data, task, members, 42, gpu, {}, options));
    for (const auto& o : out) CHECK(o.error.empty());
    // The same bits on a rerun: the pack's kernels are deterministic too.
    const auto again = train_packed(*prototype, PackedObjective{0.01}, f.data, task, members, 42, gpu, {}, options);
    for (std::size_t c = 0; c < out.size(); ++c)
      for (std::size_t t = 0; t < out[c].update.weights.size(); ++t)
        CHECK(torch::equal(out[c].update.weights[t].value, again[c].update.weights[t].value));
  }
  // A ResNet (BatchNorm: size groups) whose prototype lives on the GPU, as a slot's does: every
  // tensor of every update comes back on the CPU.
  ModelOptions narrow;
  narrow.width = 8;
  auto resnet = make_model("resnet8", {1, 28, 28}, 10, 5, narrow);
  const auto resnet_task = sgd_task(*resnet, 1, 0.05, 1);
  resnet->to(gpu);
  PackOptions options;
  options.pad_to = 16;
  options.forbid_syncs = true;
  std::vector<PackOutcome> out;
  CHECK_NOTHROW(out = train_packed(*resnet, PackedObjective{}, f.data, resnet_task, members, 42, gpu, {}, options));
  for (const auto& o : out) {
    CHECK(o.error.empty());
    for (const auto& t : o.update.weights) CHECK(t.value.device().is_cpu());
  }
}

TEST_CASE("a GPU slot's packs replayed from CUDA graphs give the bits of eager packs", "[cuda]") {
  const auto f = random_federation({40, 21, 40, 3, 30}, 6, gpu);
  auto prototype = make_model("small-cnn", {1, 28, 28}, 10, 5);
  PackStepper graphs(gpu, true), eager(gpu, false);
  PackOptions options;
  options.pad_to = 16;
  options.forbid_syncs = true;  // captures and replays included
  const PackedObjective objective{0.01};
  const std::vector<std::vector<std::uint32_t>> packs{{0, 1, 2, 3}, {4, 2, 0}, {1, 3, 4, 0}, {2, 1, 0, 4}};
  std::uint32_t round = 1;
  for (const auto& clients : packs) {
    INFO("round " << round);
    const auto task = sgd_task(*prototype, round, 0.05 / round, 2);  // a learning rate of its own
    std::vector<PackMember> members;
    for (auto c : clients) members.push_back({c, &f.indices[c]});
    std::vector<PackOutcome> a, b;
    CHECK_NOTHROW(a = graphs.train(*prototype, objective, f.data, task, members, 42, {}, options));
    CHECK_NOTHROW(b = eager.train(*prototype, objective, f.data, task, members, 42, {}, options));
    REQUIRE(a.size() == b.size());
    for (std::size_t m = 0; m < a.size(); ++m) {
      CHECK(a[m].update.metrics.loss == b[m].update.metrics.loss);
      for (std::size_t t = 0; t < a[m].update.weights.size(); ++t)
        CHECK(torch::equal(a[m].update.weights[t].value, b[m].update.weights[t].value));
    }
    ++round;
  }
  // Packs of 4 and of 3: a capture each, after an eager warm-up each; every later step replayed.
  CHECK(graphs.counters().captures == 2);
  CHECK(graphs.counters().failed_captures == 0);
  CHECK(graphs.counters().eager_steps == 2);
  CHECK(graphs.counters().replayed_steps > 10);
  CHECK(eager.counters().replayed_steps == 0);
}

int main(int argc, char** argv) {
  if (!torch::cuda::is_available()) {
    std::cout << "skipped: this LibTorch has no CUDA or no GPU is visible\n";
    return 77;
  }
  // As a GPU run sets them up: deterministic kernels, and a stream of the thread's own (a
  // capture cannot use the default stream).
  use_reproducible_cpu_arithmetic();
  use_deterministic_kernels({DeviceSlots{gpu, 1}});
  use_own_stream(gpu);
  use_blocking_waits(gpu);
  return Catch::Session().run(argc, argv);
}
