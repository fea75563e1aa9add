#include "catch_torch.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "engine/compose/loader.hpp"
#include "engine/population/population.hpp"
#include "engine/sampling/samplers.hpp"

using namespace drift;

namespace {

// Clients with sizes 100, 200, ..., and dominant label c % classes.
Population population(std::uint32_t clients, std::int64_t classes, const std::string& extra = "") {
  auto s = parse_scenario("[federation]\nclients = " + std::to_string(clients) + "\n" + extra, "p.toml");
  std::vector<std::vector<std::int64_t>> h(clients, std::vector<std::int64_t>(static_cast<std::size_t>(classes), 0));
  for (std::uint32_t c = 0; c < clients; ++c) h[c][c % classes] = 100 * (c + 1);
  return build_population(s, h);
}

SelectionContext everyone(std::uint32_t count) {
  SelectionContext ctx;
  ctx.count = count;
  ctx.eligible = [](std::uint32_t) { return true; };
  ctx.online = [](std::uint32_t) { return true; };
  return ctx;
}

}  // namespace

TEST_CASE("size-weighted draws are proportional to data size", "[sampler]") {
  const auto pop = population(4, 2);  // sizes 100, 200, 300, 400
  SizeWeightedSampler sampler(pop, 3);
  std::vector<int> freq(4, 0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++freq[sampler.select(everyone(1)).at(0)];
  // p = 0.1, 0.2, 0.3, 0.4; sd of a count is at most sqrt(n/4) ~ 71; allow 5 sd.
  for (int c = 0; c < 4; ++c) CHECK(std::abs(freq[c] - n * 0.1 * (c + 1)) < 355);
}

TEST_CASE("round robin walks the eligible ids in order", "[sampler]") {
  RoundRobinSampler sampler(7);
  auto ctx = everyone(3);
  CHECK(sampler.select(ctx) == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(sampler.select(ctx) == std::vector<std::uint32_t>{3, 4, 5});
  CHECK(sampler.select(ctx) == std::vector<std::uint32_t>{0, 1, 6});  // wraps around
  ctx.eligible = [](std::uint32_t c) { return c % 2 == 0; };
  CHECK(sampler.select(ctx) == std::vector<std::uint32_t>{2, 4, 6});
}

TEST_CASE("availability-aware picks only online clients, uniform ignores availability", "[sampler]") {
  auto ctx = everyone(5);
  ctx.online = [](std::uint32_t c) { return c < 10; };
  AvailabilityAwareSampler aware(100, 1);
  UniformSampler blind(100, 1);
  int blind_offline = 0;
  for (int i = 0; i < 200; ++i) {
    for (auto c : aware.select(ctx)) REQUIRE(c < 10);
    for (auto c : blind.select(ctx)) blind_offline += c >= 10;
  }
  // Uniform picks offline clients 90 % of the time: ~900 of 1000.
  CHECK(blind_offline > 800);
  // With 3 online clients and 5 seats, the cohort is the 3 (no duplicates, no offline).
  ctx.online = [](std::uint32_t c) { return c == 4 || c == 50 || c == 99; };
  CHECK(aware.select(ctx) == std::vector<std::uint32_t>{4, 50, 99});
}

TEST_CASE("power of choice keeps the highest-loss candidates", "[sampler]") {
  const auto pop = population(6, 2);
  std::vector<double> loss = {0.1, 0.9, 0.5, 0.7, 0.2, 0.3};
  auto ctx = everyone(2);
  ctx.last_loss = &loss;
  // With as many candidates as clients, the choice is exactly the top two losses.
  PowerOfChoiceSampler sampler(pop, 4, 3.0);
  CHECK(sampler.select(ctx) == std::vector<std::uint32_t>{1, 3});
  loss[4] = std::nan("");  // never trained: comes first
  CHECK(sampler.select(ctx) == std::vector<std::uint32_t>{1, 4});
}

TEST_CASE("cyclic rotates through the strata, stratified follows the population", "[sampler]") {
  const auto pop = population(30, 3);  // dominant labels 0, 1, 2 repeat
  CyclicSampler cyclic(pop, 2);
  for (std::uint32_t round = 1; round <= 6; ++round) {
    auto ctx = everyone(4);
    ctx.round = round;
    const auto cohort = cyclic.select(ctx);
    REQUIRE(cohort.size() == 4);
    for (auto c : cohort) CHECK(c % 3 == (round - 1) % 3);
  }
  // Strata by label hold 0+3+..+27 -> sizes of classes 0, 1, 2 are 145, 155, 165 (x100):
  // quotas for 9 seats are 2.8, 3.0, 3.2 -> 3, 3, 3; for 6 seats 1.87, 2.0, 2.13 -> 2, 2, 2.
  StratifiedSampler stratified(pop, 2);
  for (std::uint32_t seats : {9u, 6u}) {
    const auto cohort = stratified.select(everyone(seats));
    std::vector<int> per_label(3, 0);
    for (auto c : cohort) ++per_label[c % 3];
    CHECK(per_label == std::vector<int>(3, static_cast<int>(seats / 3)));
  }
  // Groups, when defined, are the cyclic strata.
  const auto grouped = population(30, 3,
                                  "[groups.low]\nrule = \"id_range\"\nfrom = 0\nto = 9\n"
                                  "[groups.mid]\nrule = \"id_range\"\nfrom = 10\nto = 19\n");
  CyclicSampler by_group(grouped, 2);
  auto ctx = everyone(3);
  ctx.round = 2;
  for (auto c : by_group.select(ctx)) CHECK((c >= 10 && c <= 19));
}

TEST_CASE("a sampler's own keys come from its row and reach its factory", "[sampler]") {
  const auto parse = [](const std::string& text) { return parse_scenario(text, "s.toml"); };
  auto s = parse("[sampler]\nname = \"power_of_choice\"\ncandidates = 4\n");
  CHECK(s.sampler.params.number("candidates") == 4.0);
  s = parse("[sampler]\nname = \"power_of_choice\"\n");
  CHECK(s.sampler.params.number("candidates") == 2.0);  // the row's default, written out
  CHECK_THAT(s.resolved_toml, Catch::Contains("candidates = 2.0"));
  s = parse("[sampler]\nname = \"uniform\"\n");
  CHECK(s.sampler.params.values().empty());
  CHECK_THAT(s.resolved_toml, !Catch::Contains("candidates") && !Catch::Contains("strata"));
  // Another sampler's key does nothing here and says whose it is (a study may switch to that
  // sampler); a misspelt key gets the closest one; values are checked either way.
  s = parse("[sampler]\nname = \"uniform\"\nstrata = \"labels\"\n");
  CHECK(s.sampler.params.values().empty());
  REQUIRE_FALSE(s.warnings.empty());
  CHECK(s.warnings.front() == "sampler.strata does nothing: sampler.name = \"uniform\" does not take it (cyclic does)");
  CHECK_THROWS_WITH(parse("[sampler]\nname = \"uniform\"\nstrata = \"rows\"\n"), Catch::Contains("labels"));
  CHECK(parse("[sampler]\nname = \"uniform\"\nstrata = \"auto\"\n").warnings.empty());  // at its default
  CHECK_THROWS_WITH(parse("[sampler]\nname = \"power_of_choice\"\ncandidate = 3\n"),
                    Catch::Contains("did you mean 'sampler.candidates'") &&
                        Catch::Contains("this run's samplers' parameters are: candidates"));
  CHECK_THROWS_WITH(parse("[sampler]\nname = \"power_of_choice\"\ncandidates = 0.5\n"),
                    Catch::Contains("sampler.candidates"));
  CHECK_THROWS_WITH(parse("[sampler]\nname = \"cyclic\"\nstrata = \"rows\"\n"), Catch::Contains("labels"));

  // A sampler the timeline switches to brings its keys, and its factory reads them: with
  // strata = labels the cyclic sampler rotates through dominant labels although groups exist.
  const std::string groups =
      "[groups.low]\nrule = \"id_range\"\nfrom = 0\nto = 9\n[groups.mid]\nrule = \"id_range\"\nfrom = 10\nto = 19\n";
  s = parse(
      "[federation]\nclients = 30\n[sampler]\nstrata = \"labels\"\n[[timeline]]\nat_round = 2\n"
      "action = \"sampler\"\nsampler = \"cyclic\"\n" +
      groups);
  CHECK(s.sampler.params.string("strata") == "labels");
  const auto pop = population(30, 3, groups);
  auto ctx = everyone(10);
  ctx.round = 2;  // the second stratum: dominant label 1, clients 1, 4, ..., 28
  std::vector<std::uint32_t> label_one;
  for (std::uint32_t c = 1; c < 30; c += 3) label_one.push_back(c);
  CHECK(make_sampler("cyclic", s, pop)->select(ctx) == label_one);
  s = parse("[federation]\nclients = 30\n[sampler]\nname = \"cyclic\"\n" + groups);
  for (auto c : make_sampler("cyclic", s, pop)->select(ctx)) CHECK((c >= 10 && c <= 19));  // auto: the groups
}

TEST_CASE("groups are assigned by rule, first match wins, profiles follow groups", "[population]") {
  const auto pop =
      population(12, 3,
                 "[profile]\nspeed = 50.0\n"
                 "[groups.a_label0]\nrule = \"dominant_label\"\nlabels = [0]\n[groups.a_label0.profile]\nspeed = 7.0\n"
                 "[groups.b_low]\nrule = \"id_range\"\nfrom = 0\nto = 5\n"
                 "[groups.c_some]\nrule = \"proportion\"\nshare = 0.5\n");
  CHECK(pop.group_names == std::vector<std::string>{"a_label0", "b_low", "c_some"});
  CHECK(pop.group_members[0] == std::vector<std::uint32_t>{0, 3, 6, 9});
  CHECK(pop.group_members[1] == std::vector<std::uint32_t>{1, 2, 4, 5});
  CHECK(pop.system[3].speed == 7.0);
  CHECK(pop.system[1].speed == 50.0);
  std::size_t grouped = 0;
  for (const auto& m : pop.group_members) grouped += m.size();
  CHECK(grouped <= 12);
  CHECK_THROWS_WITH(population(4, 3, "[groups.x]\nrule = \"dominant_label\"\nlabels = [5]\n"),
                    Catch::Contains("label 5 but the dataset has 3 classes"));
}

TEST_CASE("label_set groups and profile traces", "[population]") {
  // Clients 0..5 hold only label c % 3: label_set [0, 1] takes those with label 0 or 1.
  const auto pop = population(6, 3, "[groups.pair]\nrule = \"label_set\"\nlabels = [0, 1]\n");
  CHECK(pop.group_members[0] == std::vector<std::uint32_t>{0, 1, 3, 4});

  const auto path = (std::filesystem::temp_directory_path() / "drift-profile-trace.csv").string();
  std::ofstream(path) << "client,speed,up_bandwidth,down_bandwidth,latency\n2,7.5,100,200,0.25\n";
  const auto traced = population(4, 2, "[profile]\ntrace = \"" + path + "\"\n");
  CHECK(traced.system[2].speed == 7.5);
  CHECK(traced.system[2].up_bandwidth == 100);
  CHECK(traced.system[2].latency == 0.25);
  CHECK(traced.system[1].speed == 1000.0);  // not in the trace: the drawn profile
  std::ofstream(path) << "client,speed,up_bandwidth,down_bandwidth,latency\n9,7.5,100,200,0.25\n";
  CHECK_THROWS_WITH(population(4, 2, "[profile]\ntrace = \"" + path + "\"\n"),
                    Catch::Contains("drift-profile-trace.csv:2") && Catch::Contains("client 9"));
  // A second row for one client is an error, not a silent "last one wins".
  std::ofstream(path) << "client,speed,up_bandwidth,down_bandwidth,latency\n2,7.5,100,200,0.25\n2,9,100,200,0.25\n";
  CHECK_THROWS_WITH(population(4, 2, "[profile]\ntrace = \"" + path + "\"\n"),
                    Catch::Contains("drift-profile-trace.csv:3") && Catch::Contains("already has a row (line 2)"));
  std::ofstream(path) << "client,speed,up_bandwidth,down_bandwidth,latency\n2,inf,100,200,0.25\n";
  CHECK_THROWS_WITH(population(4, 2, "[profile]\ntrace = \"" + path + "\"\n"),
                    Catch::Contains("'inf' is not a number"));
}
