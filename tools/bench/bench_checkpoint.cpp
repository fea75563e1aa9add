// What a checkpoint costs (docs/checkpoints.md): milliseconds and megabytes per checkpoint of a
// sync and a FedBuff run of the small CNN, for the quickstart's population and for 100,000
// registered clients, with every client that trained holding a private state. The engine
// runs with a no-op trainer (the update is the received model), so the ratio column compares
// a checkpoint with a simulated round of the same run, measured in the same process; the
// last column is the cost at the default cadence (one checkpoint per 5 minutes of wall time).
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/checkpoint.hpp"
#include "engine/compose/loader.hpp"
#include "engine/models/model.hpp"
#include "engine/sampling/cohort_sampler.hpp"
#include "engine/sim/driver.hpp"
#include "engine/training/cpu_arithmetic.hpp"
#include "messages/state_store.hpp"
#include "noop_outcome.hpp"

using namespace drift;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Trains nothing; saves a client state for each job, as a client actor does, and takes a
// checkpoint at every aggregation.
struct Host : JobRunner, DriverListener {
  std::vector<std::tuple<std::uint64_t, std::uint32_t, std::shared_ptr<const TrainingTask>>> pending;
  Driver* driver = nullptr;
  std::unique_ptr<CohortSampler> sampler;
  msg::MemoryStateStore states;
  std::size_t state_bytes = 0;
  fs::path run;
  bool held = false;
  double checkpoint_ms = 0.0, checkpoint_mb = 0.0;
  int checkpoints = 0;

  void request_selection(const SelectionRequest& r) override { driver->on_selection(sampler->answer(r)); }
  std::uint64_t task_bytes(const std::shared_ptr<const TrainingTask>&) override { return 400000; }
  void launch(std::uint64_t job, std::uint32_t c, const std::shared_ptr<const TrainingTask>& t) override {
    pending.emplace_back(job, c, t);
  }
  void on_aggregation(RoundReport, const NamedTensors*) override {}
  void on_finished(const RunEnd&) override {}
  bool wants_checkpoint(std::uint32_t, bool) override { return true; }
  void on_checkpoint_ready(std::uint32_t round) override {
    held = true;
    const auto start = Clock::now();
    Checkpoint c;
    c.round = round;
    auto d = StateArchive::writer();
    driver->archive(d);
    c.driver = d.take();
    auto s = StateArchive::writer();
    sampler->archive(s);
    c.sampler = s.take();
    c.files = std::string(files_bytes, '\0');
    const auto bytes =
        write_checkpoint(run, std::move(c), "", [&](const fs::path& dir) { states.save_to(dir / "client_state"); });
    checkpoint_ms += ms_since(start);
    checkpoint_mb += static_cast<double>(bytes) / 1e6;
    ++checkpoints;
  }
  // The run directory's marks are five 32-bit counts per client: written here as that many bytes
  // (this benchmark has no run directory).
  std::size_t files_bytes = 0;

  void pump() {
    while (!pending.empty() || held) {
      if (held) {
        held = false;
        driver->resume();
        continue;
      }
      auto batch = std::move(pending);
      pending.clear();
      for (auto& [job, c, task] : batch) {
        states.save(c, msg::Buffer(std::vector<char>(state_bytes, 'x')));
        driver->on_outcome(job, bench::noop_outcome(c, *task, 400000));
      }
    }
  }
};

struct Cost {
  double round_ms, checkpoint_ms, checkpoint_mb;
};

Cost measure(const std::string& mode, std::uint32_t clients, std::uint32_t cohort, std::size_t state_bytes) {
  const std::uint32_t rounds = 10;
  const std::string text = "[federation]\nclients = " + std::to_string(clients) +
                           "\nrounds = " + std::to_string(rounds) +
                           "\n[sampler]\nclients_per_round = " + std::to_string(cohort) + "\n[simulation]\nmode = \"" +
                           mode + "\"\n[async]\nconcurrency = " + std::to_string(cohort) +
                           "\nbuffer_size = " + std::to_string(cohort) + "\n[output]\nlog_eligible = false\n";
  const auto scenario = parse_scenario(text, "bench.toml");
  const auto run = fs::temp_directory_path() / ("drift-bench-checkpoint-" + std::to_string(::getpid()));
  fs::create_directories(run);
  auto cost = [&] {
    Host host;
    host.run = run;
    host.state_bytes = state_bytes;
    host.files_bytes = std::size_t{20} * clients;
    DriverSetup setup;
    setup.scenario = &scenario;
    setup.population = std::make_shared<const Population>(synthetic_population(scenario, clients, 100));
    host.sampler = std::make_unique<CohortSampler>(scenario, setup.population);
    setup.initial_weights = state_of(*make_model("small-cnn", {1, 28, 28}, 10, 1));
    setup.algorithm = find_algorithm("fedavg")->make_server(ParamSet{}, FederationShape{});
    setup.log_eligible = false;
    auto driver = make_driver(std::move(setup), host, host);
    host.driver = driver.get();
    const auto start = Clock::now();
    driver->start();
    host.pump();
    const double total = ms_since(start);
    return Cost{(total - host.checkpoint_ms) / rounds, host.checkpoints ? host.checkpoint_ms / host.checkpoints : 0.0,
                host.checkpoints ? host.checkpoint_mb / host.checkpoints : 0.0};
  };
  const auto c = cost();
  fs::remove_all(run);
  return c;
}

}  // namespace

int main() {
  use_reproducible_cpu_arithmetic();
  std::printf(
      "checkpoint benchmark: small-cnn, fedavg, no-op trainer, a checkpoint after every aggregation;\n"
      "  every client that trained holds a 4 KB private state (in memory)\n");
  std::printf("  %-8s %9s %7s %12s %14s %10s %12s %16s\n", "driver", "clients", "cohort", "round ms", "checkpoint ms",
              "MB", "ratio", "at 5 min cadence");
  for (const std::string mode : {"sync", "fedbuff"}) {
    for (const auto& [clients, cohort] : {std::pair<std::uint32_t, std::uint32_t>{20, 8}, {100000, 100}}) {
      const auto c = measure(mode, clients, cohort, 4096);
      std::printf("  %-8s %9u %7u %12.2f %14.2f %10.2f %12.2f %15.4f%%\n", mode.c_str(), clients, cohort, c.round_ms,
                  c.checkpoint_ms, c.checkpoint_mb, c.checkpoint_ms / c.round_ms, 100.0 * c.checkpoint_ms / 300000.0);
    }
  }
  return 0;
}
