// [[timeline]] moves (docs/hierarchy.md#clients-moving-between-edges): a group's clients report
// to another edge from a cloud round on, and back home, against hand-computed cohorts, weights
// and models (FedAvg, and MIFA, whose edges forget a client that left); refusals.
#include <unistd.h>  // getpid

#include <cmath>
#include <filesystem>

#include "engine/core/error.hpp"
#include "engine/population/edge_membership.hpp"
#include "engine/population/presence.hpp"
#include "scenario_error.hpp"
#include "sim_harness.hpp"

namespace drift {
namespace {

using test::error_of;
using test::Sim;

// Labels alternate (client c holds label c % 2), so assign = "label" gives edge 0 clients 0 and
// 2, edge 1 clients 1 and 3. Group solo is client 0; every edge samples all its clients.
const std::string kMovingWorld = std::string(test::kFourClients) + R"(
[groups.solo]
rule = "id_range"
from = 0
to = 0
[groups.rest]
rule = "id_range"
from = 1
to = 3
[hierarchy]
edges = 2
edge_rounds = 2
assign = "label"
[[timeline]]
at_round = 2
action = "move"
group = "solo"
edge = "1"
[[timeline]]
at_round = 3
action = "move"
group = "solo"
edge = "home"
)";
const std::vector<Override> kAllSampled{
    {"sampler.clients_per_round", "4"}, {"federation.rounds", "3"}, {"evaluation.every", "1"}};

}  // namespace

TEST_CASE("a move changes a client's edge, home brings it back, and members stay ascending") {
  const auto s = parse_scenario(kMovingWorld, "m.toml");
  const auto population = build_population(s, test::equal_histograms(4, 100));
  EdgeMembership edges(population);
  REQUIRE(edges.members(0) == std::vector<std::uint32_t>{0, 2});
  edges.move({0, 1}, 1);
  CHECK(edges.members(0) == std::vector<std::uint32_t>{2});
  CHECK(edges.members(1) == std::vector<std::uint32_t>{0, 1, 3});
  CHECK(edges.edge_of(0) == 1);
  CHECK(edges.changes() == 1);
  edges.move({0, 1}, 1);  // already there: nothing changes
  CHECK(edges.changes() == 1);
  edges.move({0, 1, 2, 3}, kHomeEdge);
  CHECK(edges.members(0) == std::vector<std::uint32_t>{0, 2});
  CHECK(edges.members(1) == std::vector<std::uint32_t>{1, 3});
  CHECK(edges.changes() == 2);
  edges.move({0}, 1);
  // Each edge's clients per group follow the moves, and count who is present there.
  const Presence presence(population);
  for (std::uint32_t e = 0; e < 2; ++e) {
    std::vector<std::uint32_t> expected(population.group_names.size() + 1, 0);
    for (auto c : edges.members(e))
      ++expected[population.group[c] == kNoGroup ? population.group_names.size() : population.group[c]];
    CHECK(edges.counts_by_group(e) == expected);
    CHECK(presence.present_count(edges.counts_by_group(e), 0.0) == edges.members(e).size());
  }
  CHECK(move_destination(s.hierarchy, "home") == kHomeEdge);
  CHECK_FALSE(move_destination(s.hierarchy, "2"));
}

TEST_CASE("a moved client trains at its new edge, which weighs its samples at the cloud") {
  // The fake client returns its model plus (id + 1), 100 samples each. Round 1 from 0: edge 0
  // ({0, 2}) 2 then 4, edge 1 ({1, 3}) 3 then 6, the cloud (4 + 6) / 2 = 5. Round 2, client 0 at
  // edge 1: edge 0 ({2}) 8 then 11, edge 1 ({0, 1, 3}) 5 + 7/3 then 5 + 14/3; the cloud weighs
  // them 1/4 and 3/4: 11/4 + 29/4 = 10. Round 3, home again: 15.
  Sim sim(kMovingWorld, kAllSampled);
  sim.run();
  REQUIRE(sim.host.reports.size() == 3);
  const auto& r = sim.host.reports;
  CHECK(r[0].cohort == std::vector<std::uint32_t>{0, 2, 1, 3, 0, 2, 1, 3});
  CHECK(r[1].cohort == std::vector<std::uint32_t>{2, 0, 1, 3, 2, 0, 1, 3});
  CHECK(r[2].cohort == r[0].cohort);
  CHECK(r[0].edge_clients == std::vector<std::uint32_t>{2, 2});
  CHECK(r[1].edge_clients == std::vector<std::uint32_t>{1, 3});
  CHECK(r[1].edge_weight == std::vector<double>{0.25, 0.75});
  CHECK(r[1].edge_updates == std::vector<std::uint32_t>{2, 6});
  CHECK(r[2].edge_weight == std::vector<double>{0.5, 0.5});
  REQUIRE(sim.host.evaluated.size() == 3);
  CHECK(sim.host.evaluated[0] == 5.0);
  CHECK(sim.host.evaluated[1] == Approx(10.0).epsilon(1e-12));
  CHECK(sim.host.evaluated[2] == Approx(15.0).epsilon(1e-12));
  // The edge's cohort is measured against its clients of the round: edge 1 aggregated all three.
  CHECK(r[1].edge_cohort_tv[1] == Approx(0.0).margin(1e-12));
}

TEST_CASE("an edge that every client left idles, and the buffered cloud follows moves too") {
  // Both edges' clients at edge 1 from round 2: edge 0 holds none, samples none, sends nothing.
  auto emptied = kMovingWorld + "[[timeline]]\nat_round = 2\naction = \"move\"\ngroup = \"rest\"\nedge = \"1\"\n";
  Sim sim(emptied, kAllSampled);
  sim.run();
  REQUIRE(sim.host.reports.size() == 3);
  CHECK(sim.host.reports[1].edge_clients == std::vector<std::uint32_t>{0, 4});
  CHECK(sim.host.reports[1].edges_idle == std::vector<std::uint32_t>{0});
  CHECK(sim.host.reports[1].edges_reported == std::vector<std::uint32_t>{1});
  CHECK(sim.host.reports[1].edge_weight == std::vector<double>{0.0, 1.0});
  CHECK(sim.host.reports[2].edge_clients == std::vector<std::uint32_t>{1, 3});  // only solo went home

  auto buffered = kAllSampled;
  buffered.insert(buffered.end(), {{"hierarchy.cloud", "\"fedbuff\""}, {"hierarchy.buffer", "1"}});
  Sim a(kMovingWorld, buffered), b(kMovingWorld, buffered);
  a.run();
  b.run(true);  // jobs answered in reverse order: the same run
  REQUIRE(a.host.reports.size() == 3);
  CHECK(a.host.evaluated == b.host.evaluated);
  CHECK(a.host.reports[1].edge_clients == std::vector<std::uint32_t>{1, 3});
  CHECK(a.host.reports[2].edge_clients == std::vector<std::uint32_t>{2, 2});
}

namespace {

void check_mifa_moves(const std::vector<RoundReport>& r, const std::vector<double>& evaluated) {
  REQUIRE(r.size() == 3);
  CHECK(r[0].edges_reported == std::vector<std::uint32_t>{0, 1});
  CHECK(r[1].edges_idle == std::vector<std::uint32_t>{0});
  CHECK(r[1].edges_reported == std::vector<std::uint32_t>{1});
  CHECK(r[2].edges_reported == std::vector<std::uint32_t>{0, 1});
  // The tables' filled rows per reporting edge: client 0's row went with neither move.
  CHECK(r[0].edge_algorithm.at("table_clients") == std::vector<double>{1.0, 2.0});
  CHECK(std::isnan(r[1].edge_algorithm.at("table_clients")[0]));
  CHECK(r[1].edge_algorithm.at("table_clients")[1] == 3.0);
  CHECK(r[2].edge_algorithm.at("table_clients") == std::vector<double>{1.0, 2.0});
  REQUIRE(evaluated.size() == 3);
  CHECK(evaluated[0] == 3.5);
  CHECK(evaluated[1] == Approx(3.5 + 14.0 / 3.0).epsilon(1e-14));
  CHECK(evaluated[2] == Approx(7.0 + 14.0 / 3.0).epsilon(1e-14));
}

}  // namespace

TEST_CASE("MIFA with moving clients: the edge a client left forgets its change, the one it joins meets it afresh") {
  // kMovingWorld's edges by label ({0, 2} and {1, 3}, 100 samples each); client 2 never
  // answers. Round 1 from 0: edge 0 holds client 0's +1 over N = 2: 1/2 then 1; edge 1 (+2, +4
  // over 2): 3 then 6; the cloud 7/2. Round 2, client 0 at edge 1: edge 0 ({2}) forgot client
  // 0's change and has nothing to step along (idle); edge 1 ({0, 1, 3}): 7/2 + 7/3 then
  // 7/2 + 14/3, the cloud's model alone. Round 3, client 0 home: edge 1 forgot it (+3 then +6),
  // edge 0 met it afresh (+1/2 then +1): the cloud g + 7/2. The same with the tables on disk
  // (above algorithm.memory_budget_mb), which then say so.
  const auto dir = std::filesystem::temp_directory_path() / ("drift-mifa-moves-" + std::to_string(::getpid()));
  for (const bool on_disk : {false, true}) {
    INFO((on_disk ? "tables on disk" : "tables in memory"));
    auto mifa = kAllSampled;
    mifa.push_back({"algorithm.name", "\"mifa\""});
    if (on_disk) mifa.push_back({"algorithm.memory_budget_mb", "1e-9"});
    Sim sim(kMovingWorld, mifa, 0, Sim::Server::scenario, dir.string());
    sim.host.failing = {2};
    sim.run();
    check_mifa_moves(sim.host.reports, sim.host.evaluated);
    CHECK(sim.host.reports[2].edge_algorithm.count("table_on_disk") == (on_disk ? 1 : 0));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("moves that cannot run are refused with the reason") {
  CHECK_THAT(error_of(kMovingWorld, {{"hierarchy.edges", "0"}}), Catch::Contains("the federation is flat"));
  const auto entry = [](const std::string& keys) { return "[[timeline]]\nat_round = 2\naction = \"move\"\n" + keys; };
  CHECK_THAT(error_of(kMovingWorld + entry("group = \"solo\"\nedge = \"5\"\n")),
             Catch::Contains("not one of the 2 edges") && Catch::Contains("nor \"home\""));
  CHECK_THAT(error_of(kMovingWorld + entry("group = \"solo\"\n")), Catch::Contains("edge is required for action move"));
  CHECK_THAT(error_of(kMovingWorld + entry("edge = \"0\"\n")), Catch::Contains("group is required"));
}

}  // namespace drift
