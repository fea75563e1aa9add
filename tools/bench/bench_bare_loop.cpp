// The bare LibTorch training loop (no actors, no messages, one thread) and what it costs the
// kernel: samples per second, the share of CPU time spent in the kernel, and minor page faults
// per step. Built twice, with the allocator drift's executables use (drift_bench_bare_loop)
// and with glibc's (drift_bench_bare_loop_system), so that tools/bench/bench_allocator.sh can
// set drift's rounds against the loop on either allocator (docs/performance.md#the-allocator).
//   drift_bench_bare_loop [steps]   prints one line per model: name, samples/s, system share,
//                                   minor faults per step
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "engine/core/process_usage.hpp"
#include "engine/models/model.hpp"
#include "engine/training/cpu_arithmetic.hpp"

using namespace drift;

namespace {

constexpr std::int64_t kBatch = 64, kSide = 28, kClasses = 10;

void measure(const char* name, std::int64_t width, int steps) {
  ModelOptions options;
  options.width = width;
  auto model = make_model(name, {1, kSide, kSide}, kClasses, 1, options);
  model->train();
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  const auto x = torch::randn({kBatch, 1, kSide, kSide});
  const auto y = torch::randint(kClasses, {kBatch}, torch::kInt64);
  const auto step = [&] {
    opt.zero_grad();
    torch::nn::functional::cross_entropy(model->forward(x).logits, y).backward();
    opt.step();
  };
  for (int i = 0; i < 3; ++i) step();  // warm-up: the first steps size every cache
  const auto before = ProcessUsage::now();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto used = ProcessUsage::now() - before;
  const double cpu = used.user_seconds + used.system_seconds;
  std::printf("%-10s %10.0f %9.1f%% %12.0f\n", name, static_cast<double>(steps * kBatch) / wall,
              cpu > 0 ? 100.0 * used.system_seconds / cpu : 0.0,
              static_cast<double>(used.minor_faults) / static_cast<double>(steps));
}

}  // namespace

int main(int argc, char** argv) {
  use_reproducible_cpu_arithmetic();
  const int steps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 100;
  std::printf("%-10s %10s %10s %12s\n", "model", "samples/s", "system", "faults/step");
  measure("small-cnn", 0, steps);
  measure("resnet8", 16, steps);
  return 0;
}
