// The drivers when nobody can train: virtual time moves to the next moment someone is online
// (async), and a run in which nobody ever can ends with a reason, instead of asking the sampler
// again at the same virtual time for ever (async) or running rounds of nobody (sync).
#include "catch_torch.hpp"

#include <filesystem>
#include <fstream>

#include <unistd.h>  // getpid

#include "sim_harness.hpp"

using namespace drift;
using namespace drift::test;

namespace {

const char* kFour = kFourClients;

double first_selection(const Sim& sim) {
  for (const auto& r : sim.host.reports)
    for (const auto& c : r.clients)
      if (c.event == ClientEvent::finished) return c.time;
  return -1.0;
}

}  // namespace

TEST_CASE("nobody ever online ends the run with a reason, at once, in every mode", "[sim][async][faults]") {
  for (const std::string mode : {"fedbuff", "fedasync", "sync"}) {
    INFO(mode);
    Sim sim(kFour, {{"simulation.mode", "\"" + mode + "\""},
                    {"availability.model", "\"diurnal\""},
                    {"availability.period", "4.0"},
                    {"availability.duty", "0.0"}});
    sim.run();
    CHECK(sim.host.finished);
    CHECK(sim.host.reports.empty());
    CHECK_THAT(sim.host.reason, Catch::Contains("none is online or will come online again"));
  }
}

TEST_CASE("an empty availability trace is refused before the run", "[sim][async][faults]") {
  const auto trace =
      std::filesystem::temp_directory_path() / ("drift-empty-trace-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(trace) << "client,start,end\n";
  const std::vector<Override> overrides = {{"simulation.mode", "\"fedbuff\""},
                                           {"availability.model", "\"trace\""},
                                           {"availability.trace", "\"" + trace.string() + "\""}};
  CHECK_THROWS_WITH(Sim(kFour, overrides), Catch::Contains("the trace has no intervals"));
  std::filesystem::remove(trace);
}

TEST_CASE("async: when everyone is offline, virtual time moves to the moment someone comes online",
          "[sim][async][faults]") {
  // Online while (t + 3000) mod 4000 < 3000: offline during [0, 1000), online from 1000.
  for (const std::string sampler : {"uniform", "availability_aware"}) {
    INFO(sampler);
    Sim sim(kFour, {{"simulation.mode", "\"fedbuff\""},
                    {"sampler.name", "\"" + sampler + "\""},
                    {"availability.model", "\"diurnal\""},
                    {"availability.period", "4000.0"},
                    {"availability.duty", "0.75"},
                    {"availability.phase", "3000.0"}});
    sim.run();
    CHECK(sim.host.finished);
    CHECK(sim.host.reason.empty());
    REQUIRE(sim.host.reports.size() == 2);
    // Nobody trained before 1000; the first update arrives one task after it (10 s of compute).
    CHECK(first_selection(sim) > 1000.0);
    CHECK(first_selection(sim) < 1100.0);
    CHECK(sim.host.reports.front().time_start == 0.0);
  }
}

TEST_CASE("progress within an aggregation: FedBuff's buffer and a sync round's outcomes", "[sim][async]") {
  Sim buffered(kFour, {{"simulation.mode", "\"fedbuff\""},
                       {"async.buffer_size", "3"},
                       {"async.concurrency", "3"},
                       {"federation.rounds", "1"}});
  buffered.run();
  CHECK(buffered.host.progress == std::vector<std::string>{"1:1/3", "1:2/3"});  // the third aggregates
  Sim sync(kFour, {{"federation.rounds", "1"}});
  sync.run();
  CHECK(sync.host.progress == std::vector<std::string>{"1:1/2"});  // the second outcome closes the round
}

TEST_CASE("async: max_virtual_time ends a run whose clients are all offline until later", "[sim][async][faults]") {
  Sim sim(kFour, {{"simulation.mode", "\"fedasync\""},
                  {"availability.model", "\"diurnal\""},
                  {"availability.period", "4000.0"},
                  {"availability.duty", "0.75"},
                  {"availability.phase", "3000.0"},
                  {"simulation.max_virtual_time", "500.0"}});
  sim.run();
  CHECK(sim.host.finished);
  CHECK(sim.host.reason.empty());  // the scenario's own limit, not a stall
  CHECK(sim.host.reports.empty());
}
