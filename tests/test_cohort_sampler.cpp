// The sampler's engine object, without actors: what a SelectionRequest asks and what the
// Selection answers. The federation tests drive the same object through the sampler actor.
#include "catch_torch.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "engine/compose/loader.hpp"
#include "engine/sampling/cohort_sampler.hpp"

using namespace drift;

namespace {

struct Fixture {
  Scenario scenario;
  std::shared_ptr<const Population> population;
  explicit Fixture(const std::string& extra, std::uint32_t clients = 20)
      : scenario(parse_scenario("[federation]\nclients = " + std::to_string(clients) + "\n" + extra, "s.toml")) {
    std::vector<std::vector<std::int64_t>> h(clients, std::vector<std::int64_t>{50, 50});
    population = std::make_shared<const Population>(build_population(scenario, h));
  }
};

SelectionRequest sync_request(std::uint32_t round, double time, std::vector<std::uint32_t> busy = {}) {
  SelectionRequest r;
  r.round = round;
  r.time = time;
  r.busy = std::move(busy);
  return r;
}

}  // namespace

TEST_CASE("a sync request draws the cohort, over-selected, never a busy client", "[sampler][selection]") {
  Fixture f("[sampler]\nclients_per_round = 4\n");
  CohortSampler sampler(f.scenario, f.population);
  auto r = sync_request(1, 0.0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  r.over_selection = 1.5;
  const auto s = sampler.answer(r);
  CHECK(s.round == 1);
  CHECK(s.cohort_size == 4);
  CHECK(s.clients.size() == 6);  // ceil(1.5 x 4)
  CHECK(s.eligible == 10);       // 20 present, 10 busy
  CHECK(std::is_sorted(s.clients.begin(), s.clients.end()));
  for (auto c : s.clients) CHECK(c >= 10);
}

TEST_CASE("async slots are drawn one at a time, each distinct", "[sampler][selection]") {
  Fixture f("[simulation]\nmode = \"fedasync\"\n[async]\nconcurrency = 5\n");
  CohortSampler sampler(f.scenario, f.population);
  auto r = sync_request(1, 0.0, {3});
  r.slots = 5;
  const auto s = sampler.answer(r);
  REQUIRE(s.clients.size() == 5);
  CHECK(s.cohort_size == 0);
  CHECK(std::set<std::uint32_t>(s.clients.begin(), s.clients.end()).size() == 5);
  CHECK(std::find(s.clients.begin(), s.clients.end(), 3u) == s.clients.end());
  // With every other client busy only one can be drawn, and the draw stops there.
  std::vector<std::uint32_t> busy;
  for (std::uint32_t c = 0; c < 19; ++c) busy.push_back(c);
  r.busy = busy;
  CHECK(sampler.answer(r).clients == std::vector<std::uint32_t>{19});
}

TEST_CASE("the same requests give the same selections", "[sampler][selection][determinism]") {
  Fixture f("[sampler]\nclients_per_round = 5\n");
  CohortSampler a(f.scenario, f.population), b(f.scenario, f.population);
  for (std::uint32_t round = 1; round <= 5; ++round)
    CHECK(a.answer(sync_request(round, round * 10.0)).clients == b.answer(sync_request(round, round * 10.0)).clients);
}

TEST_CASE("timeline steps change the cohort fraction and who is registered", "[sampler][timeline]") {
  Fixture f(R"([sampler]
fraction = 0.5
[groups.late]
rule = "id_range"
from = 0
to = 9
[[timeline]]
at_round = 2
action = "fraction"
value = 0.2
[[timeline]]
at_round = 2
action = "leave"
group = "late"
)");
  CohortSampler sampler(f.scenario, f.population);
  CHECK(sampler.answer(sync_request(1, 0.0)).cohort_size == 10);
  auto r = sync_request(2, 5.0);
  r.timeline = {{0, 5.0}, {1, 5.0}};
  const auto s = sampler.answer(r);
  CHECK(s.cohort_size == 2);  // 0.2 of the 10 still registered
  CHECK(s.eligible == 10);
  for (auto c : s.clients) CHECK(c >= 10);
}

TEST_CASE("power of choice ranks by the losses the requests report", "[sampler][selection]") {
  Fixture f("[sampler]\nname = \"power_of_choice\"\nclients_per_round = 2\ncandidates = 10\n");
  CohortSampler sampler(f.scenario, f.population);
  auto r = sync_request(1, 0.0);
  for (std::uint32_t c = 0; c < 20; ++c) r.losses.push_back({c, c == 4 || c == 11 ? 9.0 : 0.1});
  CHECK(sampler.answer(r).clients == std::vector<std::uint32_t>{4, 11});
}

TEST_CASE("a request naming clients or entries that do not exist is refused", "[sampler][selection]") {
  Fixture f("");
  CohortSampler sampler(f.scenario, f.population);
  CHECK_THROWS_WITH(sampler.answer(sync_request(1, 0.0, {3, 1})), Catch::Contains("ascending"));
  CHECK_THROWS_WITH(sampler.answer(sync_request(1, 0.0, {20})), Catch::Contains("ascending ids"));
  auto r = sync_request(1, 0.0);
  r.losses = {{99, 1.0}};
  CHECK_THROWS_WITH(sampler.answer(r), Catch::Contains("unknown client 99"));
  r.losses.clear();
  r.timeline = {{0, 0.0}};
  CHECK_THROWS_WITH(sampler.answer(r), Catch::Contains("no timeline entry 0"));
}
