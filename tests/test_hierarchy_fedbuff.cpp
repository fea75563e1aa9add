// hierarchy.cloud = "fedbuff" (docs/hierarchy.md#asynchronous-edges-the-buffered-cloud): edges
// that loop on their own clocks and a cloud that steps every `buffer` edge models, against
// hand-computed models and times.
#include <cmath>

#include "engine/core/error.hpp"
#include "scenario_error.hpp"
#include "sim_harness.hpp"

namespace drift {
namespace {

using test::error_of;
using test::Sim;

// Edge a holds clients 0 and 1, edge b clients 2 and 3; b's link takes 5 s each way.
const std::string kBuffered = test::kTwoGroups + R"(
[hierarchy]
edge_rounds = 1
assign = "group"
cloud = "fedbuff"
buffer = 1
[hierarchy.edge.a]
[hierarchy.edge.b]
latency = 5.0
)";

}  // namespace

TEST_CASE("fedbuff cloud: each edge's model steps the cloud when it arrives, weighted by its staleness") {
  // The fake client returns its model plus (id + 1). Both edges pull 0 at time 0. Edge a's round
  // (clients 0, 1) makes 1.5 and arrives at T; the buffer of one steps the cloud to 1.5 (cloud
  // step 1). Edge a pulls 1.5 and trains it to 3 by 2T. Edge b's round (from 5 s) makes 3.5, which
  // arrives at T + 10 < 2T one step stale: 1.5 + 3.5 / sqrt(2) (step 2). Edge a's 3 arrives at 2T,
  // pulled one step ago: + (3 - 1.5) / sqrt(2) (step 3).
  Sim sim(kBuffered, {{"evaluation.every", "1"}, {"federation.rounds", "3"}});
  sim.run();
  REQUIRE(sim.host.finished);
  REQUIRE(sim.host.reports.size() == 3);
  const double step2 = 1.5 + 3.5 / std::sqrt(2.0);
  CHECK(sim.host.evaluated[0] == 1.5);
  CHECK(sim.host.evaluated[1] == Approx(step2).epsilon(1e-15));
  CHECK(sim.host.evaluated[2] == Approx(step2 + 1.5 / std::sqrt(2.0)).epsilon(1e-15));
  const auto &r1 = sim.host.reports[0], &r2 = sim.host.reports[1], &r3 = sim.host.reports[2];
  CHECK(r1.time_end == Approx(test::kTaskSeconds).epsilon(1e-12));
  CHECK(r2.time_end == Approx(test::kTaskSeconds + 10.0).epsilon(1e-12));
  CHECK(r3.time_end == Approx(2 * test::kTaskSeconds).epsilon(1e-12));
  CHECK(r1.edges_reported == std::vector<std::uint32_t>{0});
  CHECK(r2.edges_reported == std::vector<std::uint32_t>{1});
  CHECK(r3.edges_reported == std::vector<std::uint32_t>{0});
  CHECK(r1.edge_staleness[0] == 0.0);
  CHECK(std::isnan(r1.edge_staleness[1]));
  CHECK(r2.edge_staleness[1] == 1.0);
  CHECK(r3.edge_staleness[0] == 1.0);
  CHECK(r2.edge_weight[1] == Approx(1.0 / std::sqrt(2.0)).epsilon(1e-15));
  CHECK(r1.aggregated == std::vector<std::uint32_t>{0, 1});
  CHECK(r2.aggregated == std::vector<std::uint32_t>{2, 3});
  // Edge b's clients answered at 5 + T, after step 1: their records are in step 2's report.
  for (const auto& c : r1.clients) CHECK(c.time <= r1.time_end);
  bool b_in_r2 = false;
  for (const auto& c : r2.clients) b_in_r2 = b_in_r2 || (c.client_id == 2 && name_of(c.event) == "finished");
  CHECK(b_in_r2);
  // Each edge pulled once per loop: a twice, b twice (after its arrival) by step 3.
  CHECK(r1.edge_bytes_down + r2.edge_bytes_down + r3.edge_bytes_down > 0);
}

TEST_CASE("fedbuff cloud with a buffer of every edge and equal links takes the sync cloud's first step") {
  const std::vector<Override> both{{"evaluation.every", "1"},
                                   {"federation.rounds", "1"},
                                   {"hierarchy.edge.b.latency", "0"},
                                   {"hierarchy.buffer", "2"}};
  Sim buffered(kBuffered, both);
  buffered.run();
  auto sync = both;
  sync.push_back({"hierarchy.cloud", "\"sync\""});
  Sim rounds(kBuffered, sync);
  rounds.run();
  CHECK(buffered.host.evaluated == std::vector<double>{2.5});
  CHECK(rounds.host.evaluated == buffered.host.evaluated);
  CHECK(buffered.host.reports[0].edges_reported == std::vector<std::uint32_t>{0, 1});
  CHECK(buffered.host.reports[0].time_end == rounds.host.reports[0].time_end);
}

TEST_CASE("fedbuff cloud: at one instant, pulls come first, then arrivals in edge order") {
  // Equal links: both models arrive at T. Edge a's (1.5) steps the cloud first; a pulls 1.5 at T
  // before b's 3.5 arrives, one step stale: 1.5 + 3.5 / sqrt(2).
  Sim sim(kBuffered, {{"evaluation.every", "1"}, {"federation.rounds", "2"}, {"hierarchy.edge.b.latency", "0"}});
  sim.run();
  REQUIRE(sim.host.reports.size() == 2);
  CHECK(sim.host.evaluated[0] == 1.5);
  CHECK(sim.host.evaluated[1] == Approx(1.5 + 3.5 / std::sqrt(2.0)).epsilon(1e-15));
  CHECK(sim.host.reports[1].edges_reported == std::vector<std::uint32_t>{1});
  CHECK(sim.host.reports[1].time_end == sim.host.reports[0].time_end);
  CHECK(sim.host.reports[1].edge_bytes_down > 0);  // a's pull at T counts in step 2
}

TEST_CASE("fedbuff cloud: edges answered in any order give the same run") {
  const std::vector<Override> o{{"evaluation.every", "1"}, {"federation.rounds", "6"}, {"simulation.dropout", "0.3"}};
  Sim forward(kBuffered, o), backward(kBuffered, o);
  forward.run();
  backward.run(true);
  CHECK(forward.host.evaluated == backward.host.evaluated);
  CHECK(forward.host.requests == backward.host.requests);
  REQUIRE(forward.host.reports.size() == backward.host.reports.size());
  for (std::size_t i = 0; i < forward.host.reports.size(); ++i)
    CHECK(forward.host.reports[i].time_end == backward.host.reports[i].time_end);
}

TEST_CASE("fedbuff cloud: a loop cut by the edge's cycle is lost, and the edge pulls again when back") {
  // Edge a is online [0, 20) of every 40 s, edge b [20, 40). a's first loop reports at T (step 1);
  // its second, from T, would arrive at 2T > 20: lost. b pulls at 20, its model is ready at
  // 25 + T but needs 5 s more to reach the cloud, past 40: lost too. a pulls again at 40 and
  // reports at 40 + T, fresh (step 2).
  Sim sim(kBuffered, {{"evaluation.every", "1"},
                      {"federation.rounds", "2"},
                      {"hierarchy.availability", "\"diurnal\""},
                      {"hierarchy.period", "40"},
                      {"hierarchy.online_fraction", "0.5"}});
  sim.run();
  REQUIRE(sim.host.reports.size() == 2);
  const auto& r2 = sim.host.reports[1];
  CHECK(r2.edges_lost == std::vector<std::uint32_t>{0, 1});
  CHECK(r2.edges_reported == std::vector<std::uint32_t>{0});
  CHECK(r2.edges_sampled == std::vector<std::uint32_t>{0, 0, 1});  // loops that ended, by fate
  CHECK(r2.time_end == Approx(40.0 + test::kTaskSeconds).epsilon(1e-12));
  CHECK(r2.edge_staleness[0] == 0.0);
  CHECK(sim.host.evaluated[1] == 3.0);  // 1.5 + (3 - 1.5)
}

TEST_CASE("fedbuff cloud: models past the deadline are late, and a run that never steps says why") {
  // Each loop takes T (a) or T + 10 (b) from its pull: a deadline of 5 s turns every model away.
  Sim sim(kBuffered, {{"hierarchy.deadline", "5"}, {"simulation.max_virtual_time", "40"}, {"federation.rounds", "9"}});
  sim.run();
  REQUIRE(sim.host.finished);
  CHECK(sim.host.reports.empty());
  CHECK_THAT(sim.host.reason, Catch::Contains("before the cloud's first step") && Catch::Contains("late"));
}

TEST_CASE("fedbuff cloud: a run whose loops all come late ends after hierarchy.stall_loops of them") {
  // Without a time limit the edges would loop forever: a's loops end late at T, 2T, ... and b's
  // at T + 10, 2(T + 10), ...; the third late loop ends the run, after the second loop of a.
  Sim sim(kBuffered, {{"hierarchy.deadline", "5"}, {"hierarchy.stall_loops", "3"}, {"federation.rounds", "9"}});
  sim.run();
  REQUIRE(sim.host.finished);
  CHECK(sim.host.reports.empty());
  CHECK(sim.host.status == RunStatus::ended);
  CHECK_THAT(sim.host.reason, Catch::Contains("the cloud took no step in the last 3 edge loops") &&
                                  Catch::Contains("3 late") && Catch::Contains("hierarchy.stall_loops = 3"));
}

TEST_CASE("fedbuff cloud: asked to stop when no step can come, the run stops after two loops an edge") {
  // Every loop late and no stall limit: only the stop ends it. Its next step never comes, so
  // after 2 loops per edge (4) since the ask it stops, without a checkpoint.
  Sim sim(kBuffered, {{"hierarchy.deadline", "5"}, {"hierarchy.stall_loops", "0"}, {"federation.rounds", "9"}});
  sim.host.stop = true;
  sim.run();
  REQUIRE(sim.host.finished);
  CHECK(sim.host.reports.empty());
  CHECK(sim.host.status == RunStatus::stopped);
  CHECK_THAT(sim.host.reason, Catch::StartsWith("asked to stop at the cloud's next step, and none came in the 4 edge "
                                                "loops since the last") &&
                                  Catch::Matchers::EndsWith("stopped without a checkpoint"));
  // Where steps come, the stop waits for the next one (the checkpoint's place).
  Sim steps(kBuffered, {{"federation.rounds", "3"}});
  steps.host.stop = true;
  steps.run();
  CHECK(steps.host.status == RunStatus::completed);
  CHECK(steps.host.reports.size() == 3);
}

TEST_CASE("fedbuff cloud with concurrency 1: one edge at work at a time, first due first") {
  // Edge a pulls 0 at 0 and its 1.5 arrives at T (step 1). Edge b, due at 0, waited for the slot:
  // it pulls 1.5 at T, after the step, and its 1.5 + 3.5 = 5 arrives at 2T + 10 (5 s each way),
  // not stale (step 2). Edge a, due again at T, waited behind it: it pulls 5 then, and its 6.5
  // arrives at 3T + 10 (step 3).
  Sim sim(kBuffered, {{"evaluation.every", "1"}, {"federation.rounds", "3"}, {"hierarchy.concurrency", "1"}});
  sim.run();
  REQUIRE(sim.host.reports.size() == 3);
  CHECK(sim.host.evaluated == std::vector<double>{1.5, 5.0, 6.5});
  const double task = test::kTaskSeconds;
  const auto& r = sim.host.reports;
  CHECK(r[0].time_end == Approx(task).epsilon(1e-12));
  CHECK(r[1].time_end == Approx(2 * task + 10.0).epsilon(1e-12));
  CHECK(r[2].time_end == Approx(3 * task + 10.0).epsilon(1e-12));
  CHECK(r[1].edges_reported == std::vector<std::uint32_t>{1});
  CHECK(r[2].edges_reported == std::vector<std::uint32_t>{0});
  for (const auto& report : r)
    for (double staleness : report.edge_staleness) CHECK((std::isnan(staleness) || staleness == 0.0));
  // Edges answered in any order: the same run.
  Sim reversed(kBuffered, {{"evaluation.every", "1"}, {"federation.rounds", "3"}, {"hierarchy.concurrency", "1"}});
  reversed.run(true);
  CHECK(reversed.host.evaluated == sim.host.evaluated);
}

TEST_CASE("fedbuff cloud with concurrency 1: a loop its edge's outage cuts frees the slot for the next") {
  // Edge a pulls at 0 and holds the one slot; b waits for it. a goes offline at 5, during its
  // first edge round, so at T its second round finds it offline and the loop is lost: the slot
  // goes to b, whose model steps the cloud, then a's, once it is back at 30. (The run used to end
  // there, saying that no edge could send a model again.)
  const std::string outage = kBuffered +
                             "[[timeline]]\nat_time = 5.0\naction = \"offline\"\nedge = \"a\"\n"
                             "[[timeline]]\nat_time = 30.0\naction = \"online\"\nedge = \"a\"\n";
  Sim sim(outage, {{"federation.rounds", "2"}, {"hierarchy.edge_rounds", "2"}, {"hierarchy.concurrency", "1"}});
  sim.run();
  INFO(sim.host.reason);
  REQUIRE(sim.host.reports.size() == 2);
  CHECK(sim.host.reason.empty());
  CHECK(sim.host.reports[0].edges_lost == std::vector<std::uint32_t>{0});
  CHECK(sim.host.reports[0].edges_reported == std::vector<std::uint32_t>{1});
  CHECK(sim.host.reports[1].edges_reported == std::vector<std::uint32_t>{0});
}

TEST_CASE("fedbuff clouds that cannot run are refused with the reason") {
  const std::string base = kBuffered;
  CHECK_THAT(error_of(base, {{"hierarchy.edges_per_round", "1"}}),
             Catch::Contains("every online edge pulls the global model"));
  CHECK_THAT(error_of(base, {{"hierarchy.concurrency", "3"}}),
             Catch::Contains("concurrency = 3 is more than the 2 edges"));
  CHECK_THAT(error_of(base + "[availability]\nmodel = \"bernoulli\"\n"), Catch::Contains("steps with rounds"));
}

}  // namespace drift
