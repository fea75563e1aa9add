// Where a training step's host time goes, on the device drift trains on: the loop drift ran
// until wave 4 (train_locally: the batch's indices copied from pageable memory at every step,
// torch::optim::SGD, the sums kept per step), the same loop with a timer around each of its
// parts, and the device trainer that GPU slots run now, eagerly and with CUDA graphs
// (docs/performance.md#cuda-graphs). Jobs of one client each, as a round's jobs reach a slot.
//   drift_bench_device_step [device] [jobs] [samples]   default: cuda:0 if there is one, 40, 300
// prints, per model and loop: ms per step (wall), host CPU ms per step (every thread of the
// process: the autograd engine runs GPU backward passes on a thread of its own), and for the
// timed loop the host ms of each part.
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

#include "engine/algorithms/algorithm.hpp"
#include "engine/core/process_usage.hpp"
#include "engine/training/batch_schedule.hpp"
#include "engine/training/cpu_arithmetic.hpp"
#include "engine/training/cuda_support.hpp"
#include "engine/training/device_data.hpp"
#include "engine/training/device_trainer.hpp"
#include "engine/training/job_sums.hpp"
#include "engine/training/local_training.hpp"

using namespace drift;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Setup {
  torch::Device device{torch::kCPU};
  Dataset data;
  std::vector<std::vector<std::int64_t>> clients;
  TrainingTask task;
};

Setup setup(const Model& model, const torch::Device& device, int clients, std::int64_t samples) {
  torch::manual_seed(1);
  Setup s;
  s.device = device;
  const auto total = clients * samples;
  s.data.images = torch::randn({total, 1, 28, 28}).to(device);
  s.data.labels = torch::randint(10, {total}, torch::kInt64).to(device);
  s.data.num_classes = 10;
  for (int c = 0; c < clients; ++c) {
    std::vector<std::int64_t> idx;
    for (std::int64_t i = 0; i < samples; ++i) idx.push_back(c * samples + i);
    s.clients.push_back(idx);
  }
  s.task.round = 1;
  s.task.weights = state_of(model);
  for (auto& t : s.task.weights) t.value = t.value.to(torch::kCPU);
  s.task.hyper.learning_rate = 0.01;
  s.task.hyper.momentum = 0.9;
  s.task.hyper.batch_size = 64;
  return s;
}

void wait(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// The wave-3 loop of train_locally with a host timer around each part.
void timed_legacy_job(Model& model, const Setup& s, std::uint32_t client, std::map<std::string, double>& parts) {
  auto mark = Clock::now();
  const auto lap = [&](const char* part) {
    parts[part] += seconds_since(mark);
    mark = Clock::now();
  };
  load_state(model, s.task.weights);
  model.train();
  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  JobSums sums(1, s.device);
  const auto row = torch::zeros({1}, torch::TensorOptions().dtype(torch::kInt64).device(s.device));
  const auto schedule = batch_schedule(s.clients[client], s.task.hyper, client, 1, 1);
  const BatchSource source{&s.data, s.device, nullptr, torch::Tensor(), 1, 1};
  lap("1 weights in");
  std::uint32_t steps = 0;
  for (const auto& step : schedule.steps) {
    auto [x, y] = scheduled_batch(source, schedule, step, client);
    lap("2 batch (indices to the device)");
    optimizer.zero_grad();
    auto out = model.forward(x);
    auto loss = torch::nn::functional::cross_entropy(out.logits, y);
    lap("3 forward and loss");
    loss.backward();
    lap("4 backward");
    optimizer.step();
    lap("5 optimizer");
    sums.add(row, loss.view({1}), out.logits.argmax(1).eq(y).sum().view({1}), step.size, steps++);
    lap("6 sums");
  }
  sums.read();
  lap("7 sums read");
  auto weights = state_of(model);
  for (auto& t : weights) t.value = t.value.to(torch::kCPU);
  lap("8 weights out");
}

void report(const char* model_name, const char* loop, const Setup& s, int jobs, const std::function<void(int)>& job,
            std::map<std::string, double>* parts = nullptr) {
  for (int j = 0; j < 2 * static_cast<int>(s.clients.size()); ++j) job(j);  // warm-up, and graph captures
  if (parts) parts->clear();
  wait(s.device);
  const auto before = ProcessUsage::now();
  const auto start = Clock::now();
  std::uint64_t steps = 0;
  for (int j = 0; j < jobs; ++j) {
    job(j);
    steps +=
        batch_schedule(s.clients[static_cast<std::size_t>(j) % s.clients.size()], s.task.hyper, 0, 1, 1).steps.size();
  }
  wait(s.device);
  const double wall = seconds_since(start);
  const auto used = ProcessUsage::now() - before;
  const double per = 1e3 / static_cast<double>(steps);
  std::printf("%-10s %-16s %9.3f %9.3f\n", model_name, loop, wall * per,
              (used.user_seconds + used.system_seconds) * per);
  if (parts)
    for (const auto& [name, t] : *parts) std::printf("%-10s   %-34s %9.3f\n", "", name.c_str(), t * per);
}

void measure(const char* name, std::int64_t width, const torch::Device& device, int jobs, std::int64_t samples) {
  ModelOptions options;
  options.width = width;
  auto model = make_model(name, {1, 28, 28}, 10, 1, options);
  model->to(device);
  const int clients = 8;
  const auto s = setup(*model, device, clients, samples);
  auto algorithm = find_algorithm("fedavg")->make_client(ParamSet{});
  const PackedObjective objective{};
  const auto client = [&](int j) { return static_cast<std::uint32_t>(j % clients); };
  report(name, "wave 3 loop", s, jobs, [&](int j) {
    Payload state;
    train_locally(*model, *algorithm, s.data, s.clients[client(j)], s.task, client(j), state, 1, device);
  });
  std::map<std::string, double> parts;
  report(
      name, "wave 3, timed", s, jobs, [&](int j) { timed_legacy_job(*model, s, client(j), parts); }, &parts);
  for (bool graphs : {false, true}) {
    DeviceTrainer trainer(*model, device, {graphs, false});
    report(name, graphs ? "trainer, graphs" : "trainer, eager", s, jobs, [&](int j) {
      Payload state;
      trainer.train(*algorithm, &objective, s.data, s.clients[client(j)], s.task, client(j), state, 1);
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  use_reproducible_cpu_arithmetic();
  const std::string device_name = argc > 1 ? argv[1] : (torch::cuda::is_available() ? "cuda:0" : "cpu");
  const int jobs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 40;
  const std::int64_t samples = argc > 3 ? std::max(1, std::atoi(argv[3])) : 300;
  const torch::Device device(device_name);
  use_deterministic_kernels({DeviceSlots{device, 1}});
  use_own_stream(device);
  use_blocking_waits(device);
  std::printf("device %s, %d jobs of %lld samples in batches of 64\n", device_name.c_str(), jobs,
              static_cast<long long>(samples));
  std::printf("%-10s %-16s %9s %9s\n", "model", "loop", "ms/step", "host ms");
  measure("small-cnn", 0, device, jobs, samples);
  measure("resnet8", 16, device, jobs, samples);
  return 0;
}
