// Scheduling throughput of the virtual-time engine with a no-op trainer: how many client
// updates per second the drivers simulate, and what a large registered population costs.
// The goal is a per-round cost independent of the population size, and a million clients
// in well under 2 GB; the ratio column compares each run with the 100,000-client run of
// the same driver, measured in the same process.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/loader.hpp"
#include "engine/sampling/cohort_sampler.hpp"
#include "engine/sim/driver.hpp"
#include "engine/training/cpu_arithmetic.hpp"
#include "messages/selection_codec.hpp"
#include "noop_outcome.hpp"

using namespace drift;

namespace {

// Trains nothing (noop_outcome).
struct NoOpHost : JobRunner, DriverListener {
  std::vector<std::tuple<std::uint64_t, std::uint32_t, std::shared_ptr<const TrainingTask>>> pending;
  Driver* driver = nullptr;
  std::unique_ptr<CohortSampler> sampler;
  bool through_codec = false;  // encode and decode both selection messages, as the sampler actor's host does
  std::uint64_t updates = 0;

  void request_selection(const SelectionRequest& r) override {
    if (!through_codec) return driver->on_selection(sampler->answer(r));
    const auto request = msg::decode_selection_request(msg::encode_selection_request(r));
    driver->on_selection(msg::decode_selection(msg::encode_selection(sampler->answer(request))));
  }

  std::uint64_t task_bytes(const std::shared_ptr<const TrainingTask>&) override { return 4096; }
  void launch(std::uint64_t job, std::uint32_t c, const std::shared_ptr<const TrainingTask>& t) override {
    pending.emplace_back(job, c, t);
  }
  void on_aggregation(RoundReport r, const NamedTensors*) override { updates += r.num_updates; }
  void on_finished(const RunEnd&) override {}

  void pump() {
    while (!pending.empty()) {
      auto batch = std::move(pending);
      pending.clear();
      for (auto& [job, c, task] : batch) driver->on_outcome(job, bench::noop_outcome(c, *task, 4096));
    }
  }
};

double peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0.0;
}

struct Result {
  double seconds;
  std::uint64_t updates;
  std::uint32_t rounds;
};

// What a run adds to the plain scenario: `state` turns on the features that keep per-client
// state: 10% of the clients held out, per-client evaluation every 10 rounds, and for sync rounds
// a hierarchy of 100 edges sampling 10 clients each (FedBuff does not run at edges).
struct Variant {
  const char* name;
  bool state;
};
constexpr Variant kPlain{"plain", false};
constexpr Variant kState{"state", true};

std::string scenario_text(const std::string& mode, std::uint32_t clients, std::uint32_t rounds, const Variant& v) {
  const bool edges = v.state && mode == "sync";
  return "[federation]\nclients = " + std::to_string(clients) + "\nrounds = " + std::to_string(rounds) + "\n" +
         (v.state ? "held_out = 0.1\n" : "") + "[sampler]\nclients_per_round = " + (edges ? "10" : "1000") +
         "\n[simulation]\nmode = \"" + mode +
         "\"\n[async]\nconcurrency = 1000\nbuffer_size = 1000\n[profile]\nspeed_sigma = 0.5\n" +
         "[evaluation]\nevery = " + (v.state ? "1\nper_client = 10\n" : "1000000\n") +
         "[output]\nlog_eligible = false\n" + (v.state ? "[data]\nclient_test_fraction = 0.2\n" : "") +
         (edges ? "[hierarchy]\nedges = 100\n" : "");
}

Result simulate(const std::string& mode, std::uint32_t clients, std::uint32_t rounds, bool through_codec,
                const Variant& variant = kPlain) {
  const auto scenario = parse_scenario(scenario_text(mode, clients, rounds, variant), "bench.toml");
  NoOpHost host;
  host.through_codec = through_codec;
  DriverSetup setup;
  setup.scenario = &scenario;
  setup.population = std::make_shared<const Population>(synthetic_population(scenario, clients, 100));
  host.sampler = std::make_unique<CohortSampler>(scenario, setup.population);
  setup.initial_weights = {{"w", torch::zeros({16})}};
  setup.algorithm = find_algorithm("fedavg")->make_server(ParamSet{}, FederationShape{});
  setup.make_edge_algorithm = [](std::uint32_t) { return find_algorithm("fedavg")->make_server(ParamSet{}, {}); };
  setup.log_eligible = false;
  auto driver = make_driver(std::move(setup), host, host);
  host.driver = driver.get();
  const auto start = std::chrono::steady_clock::now();
  driver->start();
  host.pump();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {seconds, host.updates, rounds};
}

// The best of three runs of each size, interleaved with the codec's, so that the machine's noise
// (a few per cent on 2 shared cores) does not decide the comparison; the ratio is against the
// first size of the same driver and variant.
void table(const std::string& mode, const Variant& variant, const std::vector<std::uint32_t>& sizes) {
  const std::uint32_t rounds = mode == "sync" ? 200 : 40;
  double baseline = 0.0;
  for (auto clients : sizes) {
    Result r{1e300, 0, rounds}, c{1e300, 0, rounds};
    for (int rep = 0; rep < 3; ++rep) {
      const auto direct = simulate(mode, clients, rounds, false, variant);
      const auto codec = simulate(mode, clients, rounds, true, variant);
      if (direct.seconds < r.seconds) r = direct;
      if (codec.seconds < c.seconds) c = codec;
    }
    const double per_round = 1000.0 * r.seconds / r.rounds, codec_round = 1000.0 * c.seconds / c.rounds;
    if (baseline == 0.0) baseline = per_round;
    std::printf("  %-9s %-7s %10u %8u %14.0f %12.2f %10.3f %12.2f %11.1f%%\n", mode.c_str(), variant.name, clients,
                r.rounds, static_cast<double>(r.updates) / r.seconds, per_round, per_round / baseline, codec_round,
                100.0 * (codec_round - per_round) / per_round);
    std::fflush(stdout);
  }
}

}  // namespace

// With no argument: the tables. With MODE CLIENTS ROUNDS [state]: that run once (to profile).
int main(int argc, char** argv) {
  use_reproducible_cpu_arithmetic();
  if (argc >= 4) {
    const auto& variant = argc == 5 && std::string(argv[4]) == "state" ? kState : kPlain;
    const auto r = simulate(argv[1], std::stoul(argv[2]), std::stoul(argv[3]), false, variant);
    std::printf("%s %s %s: %.2f ms/round, peak RSS %.1f MB\n", argv[1], variant.name, argv[2],
                1000.0 * r.seconds / r.rounds, peak_rss_mb());
    return 0;
  }
  std::printf("scheduling benchmark: no-op trainer, 1,000 clients per round (async: 1,000 concurrent, K = 1,000)\n");
  std::printf(
      "  'direct': the sampler answers in the driver's thread; 'codec': every SelectionRequest and\n"
      "  Selection is encoded and decoded, as between the server and the sampler actor. 'state': 10%%\n"
      "  of the clients held out, every client scored every 10 rounds, and (sync) 100 edges of 10.\n");
  std::printf("  %-9s %-7s %10s %8s %14s %12s %10s %12s %12s\n", "driver", "variant", "clients", "rounds", "updates/s",
              "ms/round", "ratio", "codec ms", "codec cost");
  for (const std::string mode : {"sync", "fedbuff"})
    for (const auto* variant : {&kPlain, &kState}) table(mode, *variant, {100000u, 1000000u, 10000000u});
  std::printf("  peak RSS %.1f MB\n", peak_rss_mb());
  return 0;
}
