// Cost of the Cap'n Proto codec for a round's training task, against a plain copy of the same
// bytes measured in the same run. Encoding copies each tensor byte once; decoding aliases.
#include <benchmark/benchmark.h>

#include <cstring>

#include "engine/models/model.hpp"
#include "messages/codec.hpp"

using namespace drift;

namespace {

TrainingTask task_for(const std::string& model) {
  TrainingTask task;
  task.round = 1;
  task.weights = state_of(*make_model(model, {1, 28, 28}, 10, 1));
  return task;
}

const char* model_name(int index) { return index == 0 ? "small-cnn" : "fedavg-cnn"; }

void BM_CopyBaseline(benchmark::State& state) {
  const auto bytes = msg::encode_task(task_for(model_name(static_cast<int>(state.range(0))))).bytes();
  std::vector<char> target(bytes.size());
  for (auto _ : state) {
    std::memcpy(target.data(), bytes.data(), bytes.size());
    benchmark::DoNotOptimize(target.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
  state.SetLabel(model_name(static_cast<int>(state.range(0))));
}

void BM_EncodeTask(benchmark::State& state) {
  const auto task = task_for(model_name(static_cast<int>(state.range(0))));
  std::size_t size = 0;
  for (auto _ : state) {
    auto buffer = msg::encode_task(task);
    size = buffer.size();
    benchmark::DoNotOptimize(buffer.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
  state.SetLabel(model_name(static_cast<int>(state.range(0))));
}

void BM_DecodeTask(benchmark::State& state) {
  const auto buffer = msg::encode_task(task_for(model_name(static_cast<int>(state.range(0)))));
  for (auto _ : state) {
    auto task = msg::decode_task(buffer);
    benchmark::DoNotOptimize(task.weights.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * buffer.size()));
  state.SetLabel(model_name(static_cast<int>(state.range(0))));
}

}  // namespace

BENCHMARK(BM_CopyBaseline)->Arg(0)->Arg(1);
BENCHMARK(BM_EncodeTask)->Arg(0)->Arg(1);
BENCHMARK(BM_DecodeTask)->Arg(0)->Arg(1);
BENCHMARK_MAIN();
