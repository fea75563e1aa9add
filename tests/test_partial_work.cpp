// Partial work (simulation.partial_work): the steps that fit before a sync deadline, by hand,
// and the batches of a cut client being the first ones of its whole schedule.
#include "catch_torch.hpp"

#include "engine/sim/task_planner.hpp"
#include "engine/training/batch_schedule.hpp"

using namespace drift;

namespace {

// Two epochs of batches of 10 over 25 samples: steps of 10, 10, 5 per epoch, 6 in all.
Scenario two_epochs() {
  Scenario s;
  s.training.local_epochs = 2;
  s.training.batch_size = 10;
  s.simulation.partial_work = true;
  return s;
}

}  // namespace

TEST_CASE("a round's steps and the samples the first k of them go through", "[sim][partial_work]") {
  const auto h = two_epochs().training;
  CHECK(steps_per_round(h, 25) == 6);
  const double samples[] = {0, 10, 20, 25, 35, 45, 50};
  for (std::uint64_t k = 0; k <= 6; ++k) CHECK(samples_in_steps(h, 25, k) == samples[k]);
  CHECK(samples_in_steps(h, 25, 6) == local_samples_per_round(h, 25));
  CHECK(steps_within(h, 25, 36.0) == 4);
  CHECK(steps_within(h, 25, 9.9) == 0);
  CHECK(steps_within(h, 25, 1e9) == 6);
  auto steps = h;
  steps.local_steps = 4;  // batches of min(10, n)
  CHECK(steps_per_round(steps, 7) == 4);
  CHECK(samples_in_steps(steps, 7, 3) == 21);
  auto dropped = h;
  dropped.drop_last = true;  // 2 full batches an epoch
  CHECK(steps_per_round(dropped, 25) == 4);
  CHECK(samples_in_steps(dropped, 25, 3) == 30);
}

TEST_CASE("partial work: each straggler trains the steps that let it arrive by the deadline", "[sim][partial_work]") {
  const auto scenario = two_epochs();
  auto population = synthetic_population(scenario, 4, 25);
  const double speed[] = {10, 100, 5, 1};
  for (std::uint32_t c = 0; c < 4; ++c) population.system[c] = ClientSystem{speed[c], 1e12, 1e12, 0.0};
  TaskPlanner planner(scenario, population);
  const double deadline = 3.6;
  // 50 samples at 10/s take 5 s: 3.6 s hold 36 samples, 4 steps (35), computed by 3.5 s.
  auto p = planner.plan(0, 0.0, 0, 0, deadline);
  CHECK(p.max_steps == 4);
  CHECK(p.compute_end == 3.5);
  CHECK(p.earliest_finish == 3.5);
  // 0.5 s of work: it fits whole, uncut.
  p = planner.plan(1, 0.0, 0, 0, deadline);
  CHECK(p.max_steps == 0);
  CHECK(p.compute_end == 0.5);
  // Starting at 1 s at 5/s: 2.6 s hold 13 samples, one step of 10, done at 3 s.
  p = planner.plan(2, 1.0, 0, 0, deadline);
  CHECK(p.max_steps == 1);
  CHECK(p.compute_end == 3.0);
  // 3.6 samples fit in time: not one step; planned whole (it will be late).
  p = planner.plan(3, 0.0, 0, 0, deadline);
  CHECK(p.max_steps == 0);
  CHECK(p.compute_end == 50.0);
  // No deadline, nothing cut.
  CHECK(planner.plan(0, 0.0, 0, 0).max_steps == 0);
}

TEST_CASE("partial work: latency and the model's upload come off the compute budget", "[sim][partial_work]") {
  const auto scenario = two_epochs();
  auto population = synthetic_population(scenario, 1, 25);
  population.system[0] = ClientSystem{10, 100, 1e12, 0.2};
  TaskPlanner planner(scenario, population);
  // Download ends at 0.2 s; 3.6 - 0.2 (latency up) - 20 / 100 (upload) - 0.2 = 3 s: 30
  // samples, 3 steps (25), computed by 2.7 s, arriving at 2.9 + 0.2 = 3.1 s.
  const auto p = planner.plan(0, 0.0, 20, 0, 3.6);
  CHECK(p.max_steps == 3);
  CHECK(p.compute_end == Approx(2.7));
  CHECK(p.finish(20) == Approx(3.1));
}

TEST_CASE("a cut schedule is the first steps of the whole one", "[sim][partial_work]") {
  auto h = two_epochs().training;
  std::vector<std::int64_t> indices(25);
  for (std::int64_t i = 0; i < 25; ++i) indices[static_cast<std::size_t>(i)] = 100 + i;
  const auto whole = batch_schedule(indices, h, 3, 7, 42);
  h.max_steps = 4;
  const auto cut = batch_schedule(indices, h, 3, 7, 42);
  REQUIRE(whole.steps.size() == 6);
  REQUIRE(cut.steps.size() == 4);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(cut.steps[k].epoch == whole.steps[k].epoch);
    CHECK(cut.steps[k].size == whole.steps[k].size);
    CHECK(std::equal(cut.indices(cut.steps[k]), cut.indices(cut.steps[k]) + cut.steps[k].size,
                     whole.indices(whole.steps[k])));
  }
}

TEST_CASE("stragglers: a share of the cohort sets out to do 1..E epochs, drawn per round", "[sim][partial_work]") {
  auto scenario = two_epochs();
  scenario.training.local_epochs = 4;  // 3 steps an epoch, 12 in all
  scenario.simulation.partial_work = false;
  scenario.simulation.stragglers = 0.5;
  auto population = synthetic_population(scenario, 8, 25);
  for (auto& sys : population.system) sys = ClientSystem{10, 1e12, 1e12, 0.0};
  TaskPlanner planner(scenario, population);
  const std::vector<std::uint32_t> cohort = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto cuts = [&](std::uint32_t round) {
    planner.draw_stragglers(round, cohort);
    std::vector<std::uint32_t> steps;
    for (auto c : cohort) steps.push_back(planner.plan(c, 0.0, 0, 0).max_steps);
    return steps;
  };
  const auto first = cuts(1);
  std::size_t cut = 0;
  for (auto k : first) {
    CHECK(k % 3 == 0);  // whole epochs
    CHECK(k <= 9);      // a draw of all 4 epochs is no cut (0)
    cut += k > 0;
  }
  CHECK(cut <= 4);          // half of 8 are stragglers; those that drew 4 epochs do it all
  CHECK(cuts(1) == first);  // the round's draw, again
  bool differs = false;
  for (std::uint32_t round = 2; round < 10; ++round) differs = differs || cuts(round) != first;
  CHECK(differs);
  // Two edges' rounds of one number draw from streams of their own: not the same positions.
  const auto edge_cuts = [&](std::uint32_t edge_tag) {
    planner.draw_stragglers(1, cohort, edge_tag);
    std::vector<std::uint32_t> steps;
    for (auto c : cohort) steps.push_back(planner.plan(c, 0.0, 0, 0).max_steps);
    return steps;
  };
  CHECK(edge_cuts(1) != edge_cuts(2));
  CHECK(edge_cuts(1) == edge_cuts(1));
  // A cut plan computes only its epochs: 3 epochs (75 samples) at 10/s end at 7.5 s.
  planner.draw_stragglers(1, cohort);
  for (auto c : cohort) {
    const auto p = planner.plan(c, 0.0, 0, 0);
    if (p.max_steps > 0) CHECK(p.compute_end == samples_in_steps(scenario.training, 25, p.max_steps) / 10.0);
  }
}
