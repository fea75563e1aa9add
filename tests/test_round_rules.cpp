// The round drivers' rules that live outside them: what a task becomes at launch, what the
// server half learns beside the updates, stale updates waiting for their aggregation, the
// async drivers' idle rules and the aggregation stages of a scenario without privacy.
#include "catch_torch.hpp"

#include "engine/population/availability.hpp"
#include "engine/sim/aggregation_stages.hpp"
#include "engine/sim/async_idle.hpp"
#include "engine/sim/roster.hpp"
#include "engine/sim/round_rules.hpp"
#include "engine/sim/stale_updates.hpp"

using namespace drift;

namespace {

TaskPlan plan(double earliest_finish, double drop_time = kNever) {
  TaskPlan p;
  p.start = 10.0;
  p.earliest_finish = earliest_finish;
  p.drop_time = drop_time;
  return p;
}

ClientUpdate update(std::uint32_t client, std::uint64_t version) {
  ClientUpdate u;
  u.client_id = client;
  u.model_version = version;
  u.num_samples = 100 + client;
  u.weights = {{"w", torch::full({2}, static_cast<float>(client))}};
  return u;
}

}  // namespace

TEST_CASE("a sync task at launch: dropped, late untrained, or trained", "[sim][round_rules]") {
  SimulationConfig sim;
  sim.late_updates = LateUpdates::discard;
  auto d = decide_launch(plan(30.0), 10.0, 10.0, kNever, sim);
  CHECK(d.kind == LaunchDecision::drop);
  CHECK(d.at == 10.0);
  CHECK(d.why == "offline when selected");
  d = decide_launch(plan(30.0, 25.0), 10.0, 20.0, kNever, sim);
  CHECK(d.why == "went offline");  // offline at 20 s, before its drop at 25 s
  CHECK(d.at == 20.0);
  d = decide_launch(plan(30.0, 25.0), 10.0, kNever, kNever, sim);
  CHECK(d.why == "dropped out");
  CHECK(d.at == 25.0);
  d = decide_launch(plan(30.0), 10.0, kNever, 29.0, sim);  // certain to miss a deadline at 29 s
  CHECK(d.kind == LaunchDecision::late);
  CHECK(d.at == 30.0);
  CHECK(decide_launch(plan(30.0), 10.0, kNever, 30.0, sim).kind == LaunchDecision::train);
  sim.train_doomed = true;  // measure the doomed work
  CHECK(decide_launch(plan(30.0), 10.0, kNever, 29.0, sim).kind == LaunchDecision::train);
  sim.train_doomed = false;
  sim.late_updates = LateUpdates::stale;  // a late update still counts, later
  CHECK(decide_launch(plan(30.0), 10.0, kNever, 29.0, sim).kind == LaunchDecision::train);
}

TEST_CASE("the server half learns each update's staleness and pulled version", "[sim][round_rules]") {
  const auto input = aggregation_input(7, 5, {update(3, 5), update(1, 2)});
  CHECK(input.round == 7);
  CHECK(input.staleness == std::vector<std::uint64_t>{0, 3});
  CHECK(input.pulled_version == std::vector<std::uint64_t>{5, 2});
}

TEST_CASE("jobs group by their task: the model they start from and their step cut", "[sim][round_rules]") {
  const NamedTensors own;
  const JobLaunches jobs = {{10, 4}, {11, 5}, {12, 6}, {13, 7}, {14, 8}};
  const auto groups = group_jobs(jobs, [&](std::uint64_t job, std::uint32_t c) {
    return JobGroup{c % 2 ? &own : nullptr, job == 14 ? 3u : 0u, {}};
  });
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].start == nullptr);
  CHECK(groups[0].jobs == JobLaunches{{10, 4}, {12, 6}});
  CHECK(groups[1].start == &own);
  CHECK(groups[1].jobs == JobLaunches{{11, 5}, {13, 7}});
  CHECK(groups[2].max_steps == 3);
  CHECK(groups[2].jobs == JobLaunches{{14, 8}});
}

TEST_CASE("stale updates join the first aggregation that ends after they arrive", "[sim][round_rules]") {
  StaleUpdates stale;
  stale.keep({12.0, update(4, 1), 40});
  stale.keep({30.0, update(2, 1), 20});
  stale.keep({11.0, update(9, 0), 90});
  std::vector<ClientRecord> records;
  auto arrived = stale.take_arrived(20.0, 3, records);
  REQUIRE(arrived.size() == 2);  // in the order kept
  CHECK(arrived[0].client_id == 4);
  CHECK(arrived[1].client_id == 9);
  REQUIRE(records.size() == 2);
  CHECK(records[0].event == ClientEvent::stale);
  CHECK(records[0].time == 12.0);
  CHECK(records[0].staleness == 2);
  CHECK(records[1].staleness == 3);
  CHECK(records[1].bytes_up == 90);
  records.clear();
  CHECK(stale.take_arrived(29.0, 4, records).empty());
  arrived = stale.take_arrived(30.0, 4, records);
  REQUIRE(arrived.size() == 1);
  CHECK(arrived[0].client_id == 2);
}

TEST_CASE("async idle: time moves to the next online client, or looks again, or the run ends", "[sim][round_rules]") {
  AsyncIdle idle(2);
  std::string why;
  double now = 100.0;
  CHECK(idle.wait(now, 250.0, why));
  CHECK(now == 250.0);
  CHECK(idle.wait(now, 250.0, why));  // someone online, nobody chosen: look again 60 s later
  CHECK(now == 250.0 + AsyncIdle::kRetry);
  CHECK_FALSE(idle.wait(now, kNever, why));
  CHECK(why.find("no client can train after virtual time 310 s") == 0);
}

TEST_CASE("async idle: instant drops stall the fills, or end the run past their limit", "[sim][round_rules]") {
  AsyncIdle idle(1);
  std::string why;
  CHECK(idle.instant_drop(5.0, false, why));  // nobody idle online: the fills wait for time to move
  CHECK(idle.stalled(5.0));
  CHECK_FALSE(idle.stalled(6.0));
  for (std::uint64_t i = 0; i < AsyncIdle::kMaxInstantDropsPerSlot; ++i) REQUIRE(idle.instant_drop(6.0, true, why));
  CHECK_FALSE(idle.instant_drop(6.0, true, why));
  CHECK(why ==
        "at virtual time 6 s the sampler chose 1000 clients in a row that dropped out at once, although "
        "others were online");
  idle.launched();
  CHECK(idle.instant_drop(6.0, true, why));
}

TEST_CASE("aggregation stages without privacy or secure aggregation pass updates through", "[sim][round_rules]") {
  Scenario scenario;
  const auto population = synthetic_population(scenario, 4, 100);
  Roster roster(scenario, population);
  AggregationStages stages(scenario, population, nullptr);
  NamedTensors global;
  global = {{"w", torch::zeros({2})}};
  std::vector<ClientUpdate> accepted = {update(1, 0), update(2, 0)};
  RoundReport report;
  double end = 5.0;
  CHECK(stages.secure(1, 0.0, global, accepted, roster, report, end));
  stages.privatise(global, accepted, 1);
  stages.record(report, {1, 2}, true);
  CHECK(end == 5.0);
  CHECK(accepted.size() == 2);
  CHECK(torch::equal(accepted[1].weights[0].value, torch::full({2}, 2.0f)));
  CHECK_FALSE(report.dp);
  CHECK_FALSE(report.sa);
}
