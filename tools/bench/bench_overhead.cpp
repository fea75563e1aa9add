// Overhead of drift's machinery: the same FedAvg rounds (same cohorts, same batch order, same
// initial model, same evaluation) run (a) through drift's actors and Cap'n Proto messages and
// (b) as a bare LibTorch loop in one thread. Both use one training thread, so the ratio
// (a)/(b) is what actors, messages and bookkeeping cost. The bare loop must reproduce drift's
// accuracies (exactly on one machine; within a stated tolerance across CPU kernels), or the
// comparison is void and the benchmark fails.
#include <ATen/Parallel.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "actors/federation.hpp"
#include "engine/compose/loader.hpp"
#include "engine/core/rng.hpp"
#include "engine/metrics/evaluation.hpp"
#include "engine/models/model.hpp"
#include "engine/sampling/samplers.hpp"
#include "engine/training/cpu_arithmetic.hpp"

using namespace drift;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// FedAvg written out by hand with nothing but LibTorch. Returns the accuracy after each round.
std::vector<double> bare_fedavg(const Scenario& s, const FederationData& fed) {
  const auto& train = *fed.data.train;
  const auto& test = *fed.data.test;
  auto model = make_scenario_model(s, train);
  UniformSampler sampler(s.clients, s.seed);
  SelectionContext everyone;
  everyone.count = s.sampler.cohort_size(s.clients);
  everyone.eligible = [](std::uint32_t) { return true; };
  std::vector<torch::Tensor> global;
  for (auto& p : model->parameters()) global.push_back(p.detach().clone());

  std::vector<double> accuracies;
  for (std::uint32_t round = 1; round <= s.rounds; ++round) {
    std::vector<torch::Tensor> sum;
    for (auto& g : global) sum.push_back(torch::zeros(g.sizes(), torch::kFloat64));
    double total = 0;
    everyone.round = round;
    for (auto client : sampler.select(everyone)) {
      {
        torch::NoGradGuard no_grad;
        auto params = model->parameters();
        for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(global[i]);
      }
      model->train();
      // The same schedule as the drivers: round r trains with lr * lr_decay^(r - 1).
      const double lr = s.training.learning_rate * std::pow(s.training.lr_decay, static_cast<double>(round - 1));
      torch::optim::SGD opt(
          model->parameters(),
          torch::optim::SGDOptions(lr).momentum(s.training.momentum).weight_decay(s.training.weight_decay));
      const auto& indices = fed.partition.indices[client];
      for (std::uint32_t epoch = 0; epoch < s.training.local_epochs; ++epoch) {
        auto order = indices;
        Rng rng = make_stream(s.seed, "batch-order", {client, round, epoch});
        rng.shuffle(order);
        for (std::size_t b = 0; b < order.size(); b += s.training.batch_size) {
          const auto n = std::min<std::size_t>(s.training.batch_size, order.size() - b);
          auto idx = torch::from_blob(order.data() + b, {static_cast<std::int64_t>(n)}, torch::kInt64);
          opt.zero_grad();
          auto loss = torch::nn::functional::cross_entropy(model->forward(train.images.index_select(0, idx)).logits,
                                                           train.labels.index_select(0, idx));
          loss.item<double>();  // drift checks every loss for nan; read it here too
          loss.backward();
          opt.step();
        }
      }
      const double n = static_cast<double>(indices.size());
      total += n;
      auto params = model->parameters();
      for (std::size_t i = 0; i < params.size(); ++i) sum[i].add_(params[i].detach().to(torch::kFloat64), n);
    }
    for (std::size_t i = 0; i < global.size(); ++i) global[i] = (sum[i] / total).to(torch::kFloat32);

    torch::NoGradGuard no_grad;
    {
      auto params = model->parameters();
      for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(global[i]);
    }
    model->eval();
    // Batches as drift's evaluation cuts them: fixed chunks of the test set, batches within
    // each, so both sides run the same kernels on the same inputs.
    std::int64_t correct = 0;
    for (const auto& [begin, end] : evaluation_chunks(static_cast<std::uint64_t>(test.size()),
                                                      static_cast<std::uint64_t>(s.evaluation.chunk_size), {})) {
      for (auto b = static_cast<std::int64_t>(begin); b < static_cast<std::int64_t>(end);
           b += s.evaluation.batch_size) {
        const auto e = std::min<std::int64_t>(static_cast<std::int64_t>(end), b + s.evaluation.batch_size);
        correct += model->forward(test.images.slice(0, b, e))
                       .logits.argmax(1)
                       .eq(test.labels.slice(0, b, e))
                       .sum()
                       .item<std::int64_t>();
      }
    }
    accuracies.push_back(static_cast<double>(correct) / static_cast<double>(test.size()));
  }
  return accuracies;
}

std::vector<double> drift_fedavg(std::shared_ptr<const Scenario> s, std::shared_ptr<const FederationData> fed,
                                 std::uint32_t slots) {
  const auto dir = fs::temp_directory_path() / ("drift-bench-" + std::to_string(getpid()));
  fs::remove_all(dir);
  auto directory = std::make_shared<RunDirectory>(dir, *s, *fed);
  actors::FederationOptions options;
  options.cpu_slots = slots;
  actors::run_federation(s, fed, directory, std::make_shared<actors::RunObserver>(), options);
  std::vector<double> accuracies;
  std::ifstream in(dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) accuracies.push_back(nlohmann::json::parse(line)["test_accuracy"]);
  fs::remove_all(dir);
  return accuracies;
}

}  // namespace

int main(int argc, char** argv) {
  use_reproducible_cpu_arithmetic();
  const std::string path = argc > 1 ? argv[1] : "scenarios/quickstart.toml";
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 2;
  auto scenario = std::make_shared<Scenario>(load_scenario(path, {{"federation.rounds", "4"}}));
  auto fed = std::make_shared<const FederationData>(prepare_federation_data(*scenario));
  std::printf("overhead benchmark: %s, %u rounds of %u clients, %s, best of %d\n", path.c_str(), scenario->rounds,
              scenario->sampler.cohort_size(scenario->clients), scenario->model.c_str(), repeats);

  double bare = 1e30, one = 1e30, two = 1e30;
  std::vector<double> bare_acc, drift_acc;
  for (int r = 0; r < repeats; ++r) {
    auto t = Clock::now();
    bare_acc = bare_fedavg(*scenario, *fed);
    bare = std::min(bare, seconds_since(t));
    t = Clock::now();
    drift_acc = drift_fedavg(scenario, fed, 1);
    one = std::min(one, seconds_since(t));
    t = Clock::now();
    drift_fedavg(scenario, fed, 2);
    two = std::min(two, seconds_since(t));
  }
  // The same training gives the same accuracies to the bit on one machine; across CPU kernels
  // (AVX2 against AVX-512, say) a sum may round differently and flip a test sample's argmax.
  // Up to kTolerance per round is that, not different training; more voids the comparison.
  constexpr double kTolerance = 0.001;  // 10 of the 10,000 Fashion-MNIST test images
  double largest = 0.0;
  for (std::size_t i = 0; i < std::min(bare_acc.size(), drift_acc.size()); ++i)
    largest = std::max(largest, std::abs(bare_acc[i] - drift_acc[i]));
  if (bare_acc.size() != drift_acc.size() || largest > kTolerance) {
    std::fprintf(stderr,
                 "the bare loop and drift disagree (final accuracy %.4f vs %.4f, largest gap %.4f > %.4f): "
                 "not the same training\n",
                 bare_acc.back(), drift_acc.back(), largest, kTolerance);
    return 1;
  }
  std::printf("  same training: both reach %.2f%% after %u rounds (largest gap per round %.4f, tolerance %.4f)\n",
              100 * drift_acc.back(), scenario->rounds, largest, kTolerance);
  std::printf("  %-34s %8.2f s   ratio 1.000 (baseline)\n", "bare LibTorch loop, 1 thread", bare);
  std::printf("  %-34s %8.2f s   ratio %.3f (target <= 1.10)\n", "drift actors + messages, 1 slot", one, one / bare);
  std::printf("  %-34s %8.2f s   ratio %.3f\n", "drift actors + messages, 2 slots", two, two / bare);
  return 0;
}
