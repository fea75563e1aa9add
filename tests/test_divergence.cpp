// Honest failures: a run whose every update of an aggregation failed, or whose model is no
// longer finite, ends as "diverged" (or continues, when the scenario says so); and an async run
// cut by a virtual-time limit still evaluates its last aggregation.
#include "catch_torch.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/sim/divergence.hpp"
#include "engine/sim/update_drift.hpp"
#include "engine/tensors/named_tensors.hpp"
#include "sim_harness.hpp"

using namespace drift;
using namespace drift::test;

namespace {

// Five rounds of the harness's four clients.
const char* kFour = kFourClients;
const Override kFiveRounds{"federation.rounds", "5"};

}  // namespace

TEST_CASE("divergence: every update failed, a non-finite loss or model", "[sim][divergence]") {
  RoundReport r;
  r.round = 3;
  CHECK(divergence_of(r, nullptr).empty());
  r.failed = 2;
  r.clients.push_back(failed_record(1, 0.0, "loss became nan"));
  CHECK(divergence_of(r, nullptr) == "every update of aggregation 3 failed (client 1: loss became nan)");
  r.finished = 1;  // one update came back: not diverged
  r.num_updates = 1;
  CHECK(divergence_of(r, nullptr).empty());
  r.samples = 10;
  r.train_loss = std::nan("");
  CHECK_THAT(divergence_of(r, nullptr), Catch::Contains("training loss of aggregation 3 is not finite"));
  r.train_loss = 1.0;
  NamedTensors global = {{"a", torch::zeros({2})},
                         {"b", torch::tensor({1.0, std::numeric_limits<double>::infinity()})}};
  CHECK(divergence_of(r, &global) == "the global model holds a non-finite value in b after aggregation 3");
  CHECK(failed_streak_divergence(9, 10).empty());
  CHECK_THAT(failed_streak_divergence(10, 10), Catch::Contains("10 updates failed in a row"));
}

TEST_CASE("divergence: an evaluation whose test loss is not finite", "[sim][divergence]") {
  RoundReport r;
  r.round = 4;
  r.test_loss = std::numeric_limits<double>::infinity();
  CHECK(evaluation_divergence(r).empty());  // not evaluated this round: the loss means nothing
  r.evaluated = true;
  CHECK(evaluation_divergence(r) == "the test loss of aggregation 4 is not finite");
  r.test_loss = 2.3;
  CHECK(evaluation_divergence(r).empty());
}

TEST_CASE("divergence: sync, every client failing, stops at round 1 as diverged", "[sim][divergence]") {
  Sim sim(kFour, {kFiveRounds});
  sim.host.failing = {0, 1, 2, 3};
  sim.run();
  REQUIRE(sim.host.finished);
  CHECK(sim.host.status == RunStatus::diverged);
  REQUIRE(sim.host.reports.size() == 1);
  CHECK(sim.host.reports[0].divergence == sim.host.reason);
  CHECK_THAT(sim.host.reason, Catch::StartsWith("every update of aggregation 1 failed"));
  CHECK(sim.host.evaluated.size() == 1);  // the last aggregation is evaluated
}

TEST_CASE("divergence: on_divergence = continue runs every round and marks each", "[sim][divergence]") {
  Sim sim(kFour, {kFiveRounds, {"simulation.on_divergence", "\"continue\""}});
  sim.host.failing = {0, 1, 2, 3};
  sim.run();
  CHECK(sim.host.status == RunStatus::completed);
  REQUIRE(sim.host.reports.size() == 5);
  for (const auto& r : sim.host.reports) CHECK_FALSE(r.divergence.empty());
}

TEST_CASE("divergence: FedBuff stops after as many failures in a row as a buffer holds", "[sim][divergence][async]") {
  Sim sim(kFour, {kFiveRounds, {"simulation.mode", "\"fedbuff\""}});
  sim.host.failing = {0, 1, 2, 3};
  sim.run();
  CHECK(sim.host.status == RunStatus::diverged);
  REQUIRE(sim.host.reports.size() == 1);
  CHECK(sim.host.reports[0].failed == 2);
  CHECK(sim.host.reports[0].num_updates == 0);
}

TEST_CASE("async: a run cut by max_virtual_time evaluates its last aggregation", "[sim][async]") {
  // Evaluated every 100 aggregations only; each aggregation takes about 10 virtual seconds.
  Sim sim(kFour, {{"simulation.mode", "\"fedbuff\""},
                  {"federation.rounds", "100"},
                  {"evaluation.every", "100"},
                  {"simulation.max_virtual_time", "45.0"}});
  sim.run();
  REQUIRE(sim.host.finished);
  CHECK(sim.host.status == RunStatus::completed);
  REQUIRE(sim.host.reports.size() >= 2);
  CHECK(sim.host.reports.size() < 100);
  CHECK(sim.host.evaluated.size() == 1);
  CHECK(sim.host.reports.back().time_end < 45.0);
  for (std::size_t i = 0; i + 1 < sim.host.reports.size(); ++i) CHECK(sim.host.reports[i].round == i + 1);
}

TEST_CASE("update drift: cohort vs population update against hand-computed values", "[sim][drift]") {
  const NamedTensors global = {{"w", torch::zeros({2}, torch::kFloat64)}};
  auto update = [](double a, double b, std::uint64_t n) {
    ClientUpdate u;
    u.num_samples = n;
    u.weights = {{"w", torch::tensor({a, b}, torch::kFloat64)}};
    return u;
  };
  const auto k1 = update(1, 0, 1), k2 = update(0, 1, 1), k3 = update(1, 1, 2);
  // Cohort mean (0.5, 0.5); two clients not selected, one shadow standing for both (r = 2):
  // population (1 + 0 + 2*2*1, 0 + 1 + 2*2*1) / (1 + 1 + 2*2) = (5/6, 5/6).
  const auto d = update_drift(global, {&k1, &k2}, {&k3}, 2);
  CHECK(d.relative_l2 == Approx(0.4));  // |0.5 - 5/6| / (5/6)
  CHECK(d.cosine == Approx(1.0));
  // Orthogonal shadow: population (1/3, 1/3) + ... by hand: cohort (1, 0); shadow (0, 1), n 1, r 1.
  const auto a = update(1, 0, 1), b = update(0, 1, 1);
  const auto o = update_drift(global, {&a}, {&b}, 1);  // population (0.5, 0.5)
  CHECK(o.relative_l2 == Approx(1.0));                 // |(0.5, -0.5)| / |(0.5, 0.5)|
  CHECK(o.cosine == Approx(std::sqrt(0.5)));
  CHECK(std::isnan(update_drift(global, {&a}, {}, 3).relative_l2));
}

TEST_CASE("shadow clients: a seeded sample of the unselected, trained as counterfactuals, never aggregated",
          "[sim][drift]") {
  Sim sim(kFour, {{"federation.rounds", "2"}, {"simulation.shadow_clients", "1"}});
  sim.run();
  REQUIRE(sim.host.reports.size() == 2);
  REQUIRE(sim.host.counterfactual.size() == 2);  // one per round
  for (std::size_t r = 0; r < 2; ++r) {
    const auto& report = sim.host.reports[r];
    const auto shadow = sim.host.counterfactual[r];
    CHECK(std::find(report.cohort.begin(), report.cohort.end(), shadow) == report.cohort.end());
    CHECK(std::find(report.aggregated.begin(), report.aggregated.end(), shadow) == report.aggregated.end());
    CHECK(report.shadow_clients == 1);
    // The fake update is w + (client + 1), 100 samples each: 1-D deltas c + 1; r = 2 / 1.
    double cohort = 0.0;
    for (auto c : report.aggregated) cohort += c + 1.0;
    const double population = (cohort + 2.0 * (shadow + 1.0)) / (report.aggregated.size() + 2.0);
    cohort /= static_cast<double>(report.aggregated.size());
    CHECK(report.update_drift == Approx(std::abs(cohort - population) / population));
    CHECK(report.update_cosine == Approx(1.0));
  }
}

TEST_CASE("shadow clients come from the training population, never from held-out clients", "[sim][drift]") {
  Sim sim(kFour, {{"federation.rounds", "3"}, {"federation.held_out", "0.25"}, {"simulation.shadow_clients", "2"}});
  const auto population = build_population(sim.scenario, equal_histograms(4, 100));
  REQUIRE(std::count(population.held_out.begin(), population.held_out.end(), 1) == 1);
  sim.run();
  REQUIRE(sim.host.reports.size() == 3);
  // Three clients train, two are selected a round: one is left to stand in for the population.
  REQUIRE(sim.host.counterfactual.size() == 3);
  for (std::size_t r = 0; r < 3; ++r) {
    CHECK(sim.host.reports[r].shadow_clients == 1);
    CHECK_FALSE(population.is_held_out(sim.host.counterfactual[r]));
  }
}

TEST_CASE("shadow clients are refused where there is no round cohort or no shared model", "[sim][drift]") {
  CHECK_THROWS_WITH(
      parse_scenario(kFour, "s.toml", {{"simulation.shadow_clients", "2"}, {"simulation.mode", "\"fedbuff\""}}),
      Catch::Contains("no round cohort to compare"));
  CHECK_THROWS_WITH(parse_scenario(kFour, "s.toml",
                                   {{"simulation.shadow_clients", "2"},
                                    {"algorithm.name", "\"fedktl\""},
                                    {"data.client_test_fraction", "0.25"}}),
                    Catch::Contains("keeps private models"));
}
