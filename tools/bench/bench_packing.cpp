// Does training K clients in lockstep pay on this machine (devices.pack)? For drift's
// small-cnn, cnn4 and resnet8 (width 16) it times one SGD step of K clients (batch 64 each,
// 1x28x28 inputs, one thread, as a trainer slot runs) and reports samples per second and
// achieved GFLOP/s:
//   unpacked  K drift models, one after the other: forward, cross-entropy, backward, SGD step
//   packed    the engine's PackedModel holding the K clients (what devices.pack trains):
//             grouped convolutions over the clients' stacked channels, BatchNorm over K x C
//             channels (so per client), batched-matmul linears, one SGD step for all
// against the single-thread GEMM rate measured in the same run (the roofline). It first checks
// that a packed step updates every client's weights as its own step does (max |difference|).
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "engine/training/cpu_arithmetic.hpp"
#include "engine/training/packed_model.hpp"

using namespace drift;
using Clock = std::chrono::steady_clock;
namespace F = torch::nn::functional;

namespace {

constexpr std::int64_t kBatch = 64, kClasses = 10, kSide = 28;

double seconds_of(const std::function<void()>& step, int repeats) {
  step();  // warm-up: allocator, kernels chosen
  const auto t = Clock::now();
  for (int i = 0; i < repeats; ++i) step();
  return std::chrono::duration<double>(Clock::now() - t).count() / repeats;
}

double gemm_gflops() {
  const auto a = torch::rand({1024, 1024}), b = torch::rand({1024, 1024});
  const double s = seconds_of([&] { auto c = torch::mm(a, b); }, 10);
  return 2.0 * 1024 * 1024 * 1024 / s / 1e9;
}

struct Subject {
  const char* name;
  std::int64_t width;
  double forward_flops;  // multiply-adds x 2 of one sample; a training step costs about three times that
};

struct Row {
  double unpacked_s, packed_s, max_diff;
};

std::vector<std::int64_t> all_rows(std::int64_t k) {
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < k; ++i) rows.push_back(i);
  return rows;
}

Row measure(const Subject& subject, std::int64_t k, int repeats) {
  ModelOptions options;
  options.width = subject.width;
  const auto prototype = make_model(subject.name, {1, kSide, kSide}, kClasses, 100, options);
  const auto start = state_of(*prototype);
  std::vector<std::shared_ptr<Model>> models;
  for (std::int64_t i = 0; i < k; ++i) {
    models.push_back(make_model(subject.name, {1, kSide, kSide}, kClasses, 100, options));
    models.back()->train();
  }
  const auto x = torch::randn({kBatch, k, kSide, kSide});
  const auto y = torch::randint(kClasses, {k, kBatch}, torch::kInt64);
  const auto rows = all_rows(k);
  PackedSgd sgd;
  sgd.learning_rate = 0.05;
  std::vector<torch::optim::SGD> opts;
  for (auto& m : models) opts.emplace_back(m->parameters(), torch::optim::SGDOptions(0.05));
  auto unpacked_step = [&] {
    for (std::int64_t i = 0; i < k; ++i) {
      auto& opt = opts[static_cast<std::size_t>(i)];
      opt.zero_grad();
      F::cross_entropy(models[static_cast<std::size_t>(i)]->forward(x.select(1, i).unsqueeze(1)).logits, y[i])
          .backward();
      opt.step();
    }
  };

  // One step each from the same start: every client's weights against its own step's.
  Row row{};
  PackedModel check(*prototype, start, k, torch::kCPU);
  check.step(rows, x, y, sgd);
  unpacked_step();
  for (std::int64_t i = 0; i < k; ++i) {
    const auto mine = check.unpack(i), theirs = state_of(*models[static_cast<std::size_t>(i)]);
    for (std::size_t t = 0; t < mine.size(); ++t)
      row.max_diff =
          std::max(row.max_diff,
                   (mine[t].value.to(torch::kDouble) - theirs[t].value.to(torch::kDouble)).abs().max().item<double>());
  }

  row.unpacked_s = seconds_of(unpacked_step, repeats);
  PackedModel packed(*prototype, start, k, torch::kCPU);
  row.packed_s = seconds_of([&] { packed.step(rows, x, y, sgd); }, repeats);
  return row;
}

// Valid 5x5 convolutions and two 2x2 pools on 28x28, then FC and head.
double two_conv_flops(double c1, double c2, double features) {
  return 2 * (c1 * 25 * 24 * 24 + c2 * c1 * 25 * 8 * 8 + c2 * 16 * features + features * kClasses);
}

// ResNet-8 on 28x28: stem, three blocks (w at 28x28, 2w at 14x14, 4w at 7x7), two 1x1 shortcuts.
double resnet8_flops(double w) {
  const double a = 28 * 28, b = 14 * 14, c = 7 * 7;
  return 2 * (w * 9 * a + 2 * w * w * 9 * a + (2 * w * w * 9 + 4 * w * w * 9 + 2 * w * w) * b +
              (8 * w * w * 9 + 16 * w * w * 9 + 8 * w * w) * c + 4 * w * kClasses);
}

}  // namespace

int main() {
  use_reproducible_cpu_arithmetic();  // one thread, as one trainer slot
  const double gemm = gemm_gflops();
  std::printf("packed clients, one thread, batch %lld per client; single-thread GEMM (1024^3 float) %.1f GFLOP/s\n\n",
              static_cast<long long>(kBatch), gemm);
  std::printf("%-10s %4s %10s %10s %8s %9s %9s %10s\n", "model", "K", "unpacked", "packed", "speedup", "unpacked",
              "packed", "max");
  std::printf("%-10s %4s %10s %10s %8s %9s %9s %10s\n", "", "", "smp/s", "smp/s", "", "%GEMM", "%GEMM", "|diff|");
  const Subject subjects[] = {{"small-cnn", 0, two_conv_flops(16, 32, 128)},
                              {"cnn4", 0, two_conv_flops(32, 64, 512)},
                              {"resnet8", 16, resnet8_flops(16)}};
  for (const auto& subject : subjects) {
    for (std::int64_t k : {1, 4, 8, 32}) {
      const auto r = measure(subject, k, k >= 32 ? 3 : 10);
      const double samples = static_cast<double>(k * kBatch), flops = 3 * subject.forward_flops * samples;
      auto share = [&](double s) { return 100 * flops / s / 1e9 / gemm; };
      std::printf("%-10s %4lld %10.0f %10.0f %7.2fx %8.1f%% %8.1f%% %10.2e\n", subject.name, static_cast<long long>(k),
                  samples / r.unpacked_s, samples / r.packed_s, r.unpacked_s / r.packed_s, share(r.unpacked_s),
                  share(r.packed_s), r.max_diff);
    }
  }
  return 0;
}
