// Every algorithm under every schedule, through the actors: sync rounds, FedAsync and FedBuff
// all run the scenario's server half (docs/algorithms.md#aggregation).
#include "catch_torch.hpp"

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/loader.hpp"
#include "run_helpers.hpp"

using namespace drift;
using namespace drift::test;

namespace {

const char* kTiny = R"(
name = "tiny_async"
seed = 3
[data]
max_train_samples = 600
max_test_samples = 200
client_test_fraction = 0.25
[partition]
scheme = "dirichlet"
alpha = 0.5
min_client_samples = 5
[federation]
clients = 6
rounds = 2
[sampler]
clients_per_round = 3
[async]
concurrency = 4
buffer_size = 3
[training]
batch_size = 16
lr = 0.05
[evaluation]
chunk_size = 100
)";

RunFiles run_tiny(const std::vector<Override>& overrides, std::uint32_t slots, const std::string& tag) {
  return run_scenario(parse_scenario(kTiny, "tiny.toml", overrides), slots, tag);
}

// One test case per mode, so that CTest runs the three side by side (each is the longest
// integration test of its mode, several times longer under the sanitizers).
void check_every_algorithm_under(const std::string& mode) {
  for (const auto& info : algorithm_catalog()) {
    INFO(info.name << " under " << mode);
    std::vector<Override> overrides = {{"algorithm.name", "\"" + info.name + "\""},
                                       {"simulation.mode", "\"" + mode + "\""}};
    // The oracle needs a participation process that defines each client's probability.
    if (info.name == "known-probability")
      overrides.insert(overrides.end(), {{"availability.model", "\"bernoulli\""}, {"availability.p", "1.0"}});
    if (mode != "sync" && !info.sync_only.empty()) {  // refused at validation, with the reason
      CHECK_THROWS_WITH(parse_scenario(kTiny, "tiny.toml", overrides), Catch::Contains("runs in sync rounds only"));
      continue;
    }
    const auto one = run_tiny(overrides, 1, info.name + "-" + mode + "-1");
    const auto two = run_tiny(overrides, 2, info.name + "-" + mode + "-2");
    CHECK(one.metrics == two.metrics);
    CHECK(one.clients == two.clients);
    const auto lines = lines_of(one.metrics);
    REQUIRE(lines.size() == 2);
    for (const auto& m : lines) {
      CHECK(m["failed"] == 0);
      CHECK(m["num_updates"].get<int>() > 0);
    }
    CHECK(lines.back().contains("test_accuracy"));
  }
}

}  // namespace

TEST_CASE("every algorithm trains in sync rounds, the same on 1 and 2 slots", "[federation][async]") {
  check_every_algorithm_under("sync");
}

TEST_CASE("every algorithm trains under FedAsync or is refused there, the same on 1 and 2 slots",
          "[federation][async]") {
  check_every_algorithm_under("fedasync");
}

TEST_CASE("every algorithm trains under FedBuff or is refused there, the same on 1 and 2 slots",
          "[federation][async]") {
  check_every_algorithm_under("fedbuff");
}

TEST_CASE("FedSKC under FedBuff: clients receive the merged knowledge and LCL changes their training",
          "[federation][async][fedskc]") {
  const std::vector<Override> base = {
      {"algorithm.name", "\"fedskc\""}, {"simulation.mode", "\"fedbuff\""}, {"federation.rounds", "3"}};
  auto with_lcl = base, without_lcl = base, fedavg = base;
  without_lcl.push_back({"algorithm.lcl", "false"});
  fedavg[0] = {"algorithm.name", "\"fedavg\""};
  const auto on = lines_of(run_tiny(with_lcl, 2, "fedskc-lcl").metrics);
  const auto off = lines_of(run_tiny(without_lcl, 2, "fedskc-nolcl").metrics);
  const auto plain = lines_of(run_tiny(fedavg, 2, "fedskc-fedavg").metrics);
  REQUIRE(on.size() == 3);
  // The first aggregation's clients started before any knowledge existed: LCL had nothing to
  // pull towards, so with and without it they trained alike.
  CHECK(on[0]["train_loss"] == off[0]["train_loss"]);
  // Later tasks carry the knowledge: more bytes down than FedAvg's, and LCL changes the loss.
  CHECK(on[2]["bytes_down"].get<double>() > plain[2]["bytes_down"].get<double>());
  CHECK(on[2]["train_loss"] != off[2]["train_loss"]);
  CHECK(on[1]["algorithm"].contains("gda_weight"));
}
