#include "catch_torch.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/loader.hpp"
#include "engine/core/error.hpp"
#include "engine/population/availability.hpp"
#include "engine/sim/drift_metrics.hpp"
#include "engine/sim/driver.hpp"
#include "engine/sim/staleness.hpp"
#include "sim_harness.hpp"

using namespace drift;
using namespace drift::test;

namespace {

// Two groups with hand-picked profiles: client 0 is fast, the others slow. With 100 samples,
// latency 0.5 s, 1000 B/s both ways, a 1000 B task and a 500 B update:
//   fast: download ends 0.5 + 1 = 1.5, compute 100/100 = 1 -> 2.5, + latency = 3.0, + upload 0.5 = 3.5
//   slow: compute 100/10 = 10 -> 11.5, earliest 12.0, finish 12.5
const char* kTimed = R"(
seed = 5
[federation]
clients = 3
rounds = 1
[sampler]
clients_per_round = 3
[profile]
latency = 0.5
up_bandwidth = 1000.0
down_bandwidth = 1000.0
speed = 10.0
[groups.fast]
rule = "id_range"
from = 0
to = 0
[groups.fast.profile]
speed = 100.0
[output]
log_eligible = false
)";

}  // namespace

TEST_CASE("sync round: finish times follow download + compute + upload", "[sim]") {
  Sim sim(kTimed);
  sim.run();
  REQUIRE(sim.host.finished);
  REQUIRE(sim.host.reports.size() == 1);
  const auto& r = sim.host.reports[0];
  CHECK(r.cohort == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(sim.event(0, 0, "finished").time == Approx(3.5));
  CHECK(sim.event(0, 1, "finished").time == Approx(12.5));
  CHECK(sim.event(0, 2, "finished").time == Approx(12.5));
  CHECK(r.time_end == Approx(12.5));
  CHECK(r.bytes_down == 3000);
  CHECK(r.bytes_up == 1500);
  // FedAvg of 1, 2, 3 with equal sample counts.
  CHECK(sim.host.evaluated.at(0) == Approx(2.0));
}

TEST_CASE("sync round: a deadline cuts the slow clients without training them", "[sim]") {
  Sim sim(kTimed, {{"simulation.deadline", "10.0"}});
  sim.driver->start();
  CHECK(sim.host.launched.size() == 1);  // the slow ones are certain to be late: not trained
  sim.host.pump();
  const auto& r = sim.host.reports[0];
  CHECK(r.aggregated == std::vector<std::uint32_t>{0});
  CHECK(r.late == 2);
  CHECK(r.time_end == Approx(10.0));
  CHECK(sim.event(0, 1, "late").detail.find("not trained") != std::string::npos);
  CHECK(sim.host.evaluated.at(0) == Approx(1.0));
  CHECK(r.wasted_compute_seconds == Approx(20.0));  // two slow clients x 10 s of compute
}

TEST_CASE("sync round: train_doomed trains late clients and counts the waste", "[sim]") {
  Sim sim(kTimed, {{"simulation.deadline", "10.0"}, {"simulation.train_doomed", "true"}});
  sim.driver->start();
  CHECK(sim.host.launched.size() == 3);
  sim.host.pump();
  const auto& r = sim.host.reports[0];
  CHECK(r.aggregated == std::vector<std::uint32_t>{0});
  CHECK(r.discarded_samples == 200);
  CHECK(sim.event(0, 2, "late").time == Approx(12.5));
}

TEST_CASE("sync rounds: late updates kept as stale join the next aggregation", "[sim]") {
  Sim sim(kTimed,
          {{"simulation.deadline", "10.0"}, {"simulation.late_updates", "\"stale\""}, {"federation.rounds", "2"}});
  sim.run();
  REQUIRE(sim.host.reports.size() == 2);
  // Round 2 starts at 10; the slow clients still work until 12.5, so only client 0 is
  // eligible; it finishes at 10 + 3.5 = 13.5, after the stale updates arrived (12.5).
  const auto& r2 = sim.host.reports[1];
  CHECK(r2.cohort == std::vector<std::uint32_t>{0});
  CHECK(r2.time_end == Approx(13.5));
  CHECK(r2.aggregated == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(r2.staleness == std::vector<std::uint64_t>{0, 1, 1});
  // Client 0 trained from w = 1 -> 2; the stale ones from w = 0 -> 2 and 3: mean 7/3.
  CHECK(sim.host.evaluated.at(1) == Approx(7.0 / 3.0));
}

TEST_CASE("sync round: over-selection keeps the first finishers", "[sim]") {
  Sim sim(kTimed, {{"sampler.clients_per_round", "1"}, {"simulation.over_selection", "3.0"}});
  sim.run();
  const auto& r = sim.host.reports[0];
  CHECK(r.cohort.size() == 3);
  CHECK(r.aggregated == std::vector<std::uint32_t>{0});
  CHECK(r.late == 2);
  CHECK(r.time_end == Approx(3.5));
}

TEST_CASE("sync round: dropouts and min_cohort", "[sim]") {
  Sim all_drop(kTimed, {{"simulation.dropout", "1.0"}});
  all_drop.run();
  const auto& r = all_drop.host.reports[0];
  CHECK(r.dropped == 3);
  CHECK(r.num_updates == 0);
  CHECK(r.model_version == 0);  // nothing aggregated
  CHECK(all_drop.host.launched.empty());
  // Every task dropped before training: the round ends at the last drop, where the server learns
  // of it, and the next begins there; virtual time never runs backwards (issue 48).
  Sim drops(kTimed, {{"simulation.dropout", "1.0"}, {"federation.rounds", "3"}});
  drops.run();
  REQUIRE(drops.host.reports.size() == 3);
  double before = 0.0;
  for (const auto& report : drops.host.reports) {
    double last_drop = report.time_start;
    for (const auto& c : report.clients) {
      CHECK(c.time >= before);
      last_drop = std::max(last_drop, c.time);
    }
    CHECK(report.time_start == before);
    CHECK(report.time_end == last_drop);
    CHECK(report.time_end > report.time_start);
    before = report.time_end;
  }

  Sim too_few(kTimed, {{"simulation.deadline", "10.0"}, {"simulation.min_cohort", "2"}});
  too_few.run();
  CHECK(too_few.host.reports[0].num_updates == 0);
  CHECK(too_few.host.reports[0].model_version == 0);
}

TEST_CASE("sync round: a client that goes offline mid-task is dropped at that time", "[sim]") {
  // Client 1 leaves at t = 5, in the middle of its 10 s of compute.
  Sim sim(std::string(kTimed) +
          "\n[groups.slow]\nrule = \"id_range\"\nfrom = 1\nto = 1\n"
          "[[timeline]]\nat_time = 5.0\naction = \"offline\"\ngroup = \"slow\"\n");
  sim.run();
  const auto& r = sim.host.reports[0];
  CHECK(sim.event(0, 1, "dropped").time == Approx(5.0));
  CHECK(r.aggregated == std::vector<std::uint32_t>{0, 2});
}

TEST_CASE("a failed job is recorded and the round goes on", "[sim]") {
  Sim sim(kTimed);
  sim.host.failing = {1};
  sim.run();
  const auto& r = sim.host.reports[0];
  CHECK(r.failed == 1);
  CHECK(sim.event(0, 1, "failed").detail == "boom");
  CHECK(r.aggregated == std::vector<std::uint32_t>{0, 2});
}

TEST_CASE("a job whose worker was lost is a dropout at its earliest finish, not a failure", "[sim][cluster]") {
  Sim sim(kTimed);
  sim.host.lost = {1};
  sim.run();
  const auto& r = sim.host.reports[0];
  CHECK(r.failed == 0);
  CHECK(r.dropped == 1);
  const auto& e = sim.event(0, 1, "dropped");
  CHECK(e.time == Approx(12.0));  // the slow client's compute end + latency
  CHECK(e.detail == "worker 'w1' lost");
  CHECK(r.aggregated == std::vector<std::uint32_t>{0, 2});
  CHECK(r.num_updates == 2);

  Sim async(kTimed, {{"simulation.mode", "\"fedbuff\""},
                     {"async.concurrency", "3"},
                     {"async.buffer_size", "2"},
                     {"federation.rounds", "4"}});
  async.host.lost = {1};
  async.run();
  std::size_t dropped = 0, failed = 0;
  for (const auto& report : async.host.reports)
    for (const auto& c : report.clients) {
      dropped += c.event == ClientEvent::dropped && c.client_id == 1;
      failed += c.event == ClientEvent::failed;
    }
  CHECK(dropped >= 1);
  CHECK(failed == 0);
}

TEST_CASE("results do not depend on the order in which jobs complete", "[sim][determinism]") {
  for (const char* mode : {"sync", "fedasync", "fedbuff"}) {
    const std::vector<Override> o = {{"simulation.mode", std::string("\"") + mode + "\""},
                                     {"federation.rounds", "6"},
                                     {"federation.clients", "12"},
                                     {"sampler.clients_per_round", "4"},
                                     {"async.concurrency", "4"},
                                     {"async.buffer_size", "2"},
                                     {"simulation.dropout", "0.2"},
                                     {"profile.speed_sigma", "0.8"},
                                     {"availability.model", "\"markov\""},
                                     {"availability.mean_online", "30.0"},
                                     {"availability.mean_offline", "10.0"}};
    Sim a(kTimed, o), b(kTimed, o);
    a.run(false);
    b.run(true);
    REQUIRE(a.host.reports.size() == b.host.reports.size());
    CHECK(a.host.reports.size() == 6);
    for (std::size_t i = 0; i < a.host.reports.size(); ++i) {
      CHECK(a.host.reports[i].aggregated == b.host.reports[i].aggregated);
      CHECK(a.host.reports[i].time_end == b.host.reports[i].time_end);
      CHECK(a.host.reports[i].clients.size() == b.host.reports[i].clients.size());
    }
    CHECK(a.host.evaluated == b.host.evaluated);
  }
}

TEST_CASE("FedAsync mixes each update with a staleness-discounted alpha", "[sim][async]") {
  // Concurrency 2 over clients 0 (fast) and 1 (slow). Client 0 finishes at 3.5, 7.0, 10.5
  // (each new task starts when the last ends); client 1, from version 0, at 12.5.
  //   3.5:  w = 0.5 * 0   + 0.5 * (0 + 1)   = 0.5
  //   7.0:  w = 0.5 * 0.5 + 0.5 * (0.5 + 1) = 1.0
  //   10.5: w = 0.5 * 1   + 0.5 * (1 + 1)   = 1.5
  //   12.5: staleness 3, a = 0.5 * (3 + 1)^-0.5 = 0.25: w = 0.75 * 1.5 + 0.25 * (0 + 2) = 1.625
  Sim sim(kTimed, {{"simulation.mode", "\"fedasync\""},
                   {"federation.clients", "2"},
                   {"federation.rounds", "4"},
                   {"sampler.clients_per_round", "2"},
                   {"async.concurrency", "2"},
                   {"async.alpha", "0.5"},
                   {"async.staleness", "\"polynomial\""},
                   {"async.staleness_a", "0.5"}});
  sim.run();
  REQUIRE(sim.host.reports.size() == 4);
  CHECK(sim.host.evaluated == std::vector<double>{0.5, 1.0, 1.5, 1.625});
  CHECK(sim.host.reports[3].staleness == std::vector<std::uint64_t>{3});
  CHECK(sim.host.reports[3].time_end == Approx(12.5));
  CHECK(sim.host.reports[0].time_end == Approx(3.5));
}

TEST_CASE("FedBuff averages K staleness-weighted deltas", "[sim][async]") {
  // K = 2. Client 0 delivers +1 at 3.5 and 7.0 (both from version 0): w = 0 + (1 + 1) / 2 = 1.
  // Then +1 at 10.5 (from version 1, staleness 0) and client 1's +2 at 12.5 (from version 0,
  // staleness 1, weight 1/sqrt(2)): w = 1 + (1 + 2/sqrt(2)) / 2.
  Sim sim(kTimed, {{"simulation.mode", "\"fedbuff\""},
                   {"federation.clients", "2"},
                   {"federation.rounds", "2"},
                   {"sampler.clients_per_round", "2"},
                   {"async.concurrency", "2"},
                   {"async.buffer_size", "2"}});
  sim.run();
  REQUIRE(sim.host.reports.size() == 2);
  CHECK(sim.host.evaluated[0] == Approx(1.0));
  CHECK(sim.host.evaluated[1] == Approx(1.0 + (1.0 + 2.0 / std::sqrt(2.0)) / 2.0));
  CHECK(sim.host.reports[1].aggregated == std::vector<std::uint32_t>{0, 1});
  CHECK(sim.host.reports[1].staleness == std::vector<std::uint64_t>{0, 1});
}
