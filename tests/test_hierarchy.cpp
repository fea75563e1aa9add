// [hierarchy] (docs/hierarchy.md): the edge map, edge availability, and the two-tier sync
// driver against hand-computed models, times and refusals.
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"
#include "engine/metrics/summary.hpp"
#include "engine/population/edge_presence.hpp"
#include "engine/population/topology.hpp"
#include "scenario_error.hpp"
#include "sim_harness.hpp"

namespace drift {
namespace {

using test::Sim;

using test::error_of;

Population population_of(const std::string& text, const std::vector<std::vector<std::int64_t>>& histograms) {
  return build_population(parse_scenario(text, "h.toml"), histograms);
}

// Two groups of two clients by id: edge 0 holds clients 0 and 1, edge 1 clients 2 and 3.
const std::string kTwoEdges = test::kTwoGroups + R"(
[hierarchy]
edges = 2
edge_rounds = 2
assign = "group"
)";

}  // namespace

TEST_CASE("edges are dealt evenly by a seeded shuffle, by dominant label in blocks, or by group") {
  const auto histograms = test::equal_histograms(10, 100);  // even ids hold label 0, odd ids label 1
  const auto dealt = population_of("[federation]\nclients = 10\n[hierarchy]\nedges = 3\n", histograms);
  REQUIRE(dealt.edges() == 3);
  std::vector<std::size_t> sizes;
  for (const auto& m : dealt.edge_members) sizes.push_back(m.size());
  std::sort(sizes.begin(), sizes.end());
  CHECK(sizes == std::vector<std::size_t>{3, 3, 4});
  CHECK(population_of("[federation]\nclients = 10\n[hierarchy]\nedges = 3\n", histograms).edge == dealt.edge);
  CHECK(population_of("seed = 2\n[federation]\nclients = 10\n[hierarchy]\nedges = 3\n", histograms).edge != dealt.edge);

  const auto skewed =
      population_of("[federation]\nclients = 10\n[hierarchy]\nedges = 2\nassign = \"label\"\n", histograms);
  CHECK(skewed.edge_members[0] == std::vector<std::uint32_t>{0, 2, 4, 6, 8});
  CHECK(skewed.edge_members[1] == std::vector<std::uint32_t>{1, 3, 5, 7, 9});

  const auto grouped = build_population(parse_scenario(kTwoEdges, "h.toml"), test::equal_histograms(4, 100));
  CHECK(grouped.edge == std::vector<std::uint32_t>{0, 0, 1, 1});
  CHECK(population_of("[federation]\nclients = 4\n", test::equal_histograms(4, 100)).edges() == 0);
}

TEST_CASE("an edge map that leaves an edge empty or a client without an edge is refused") {
  const auto histograms = test::equal_histograms(4, 100);
  const auto refusal = [&](const std::string& text) {
    try {
      population_of(text, histograms);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    FAIL("expected a UserError");
    return std::string();
  };
  CHECK_THAT(refusal("[federation]\nclients = 4\n[hierarchy]\nedges = 3\nassign = \"group\"\n[groups.a]\nrule = "
                     "\"id_range\"\nfrom = 0\nto = 3\n"),
             Catch::Contains("hierarchy.edges is 3 but the scenario has 1 groups"));
  CHECK_THAT(refusal("[federation]\nclients = 4\n[hierarchy]\nedges = 1\nassign = \"group\"\n[groups.a]\nrule = "
                     "\"id_range\"\nfrom = 0\nto = 2\n"),
             Catch::Contains("client 3 is in no group"));
  CHECK_THAT(refusal("[federation]\nclients = 4\nheld_out_group = \"a\"\n[hierarchy]\nedges = 2\nassign = "
                     "\"group\"\n[groups.a]\nrule = \"id_range\"\nfrom = 0\nto = 1\n[groups.b]\nrule = "
                     "\"id_range\"\nfrom = 2\nto = 3\n"),
             Catch::Contains("every client of edge 0 is held out"));
}

TEST_CASE("a diurnal edge is online for its share of each period, shifted by its place") {
  HierarchyConfig h;
  h.edges = 4;
  h.availability = EdgeAvailability::diurnal;
  h.period = 100.0;
  h.online_fraction = 0.5;
  CHECK(edge_online(h, 0, 0.0));
  CHECK(edge_online(h, 1, 0.0));   // phase 0.25
  CHECK(!edge_online(h, 2, 0.0));  // phase 0.5
  CHECK(edge_next_offline(h, 1, 0.0) == Approx(25.0));
  CHECK(edge_next_offline(h, 2, 10.0) == 10.0);
  CHECK(edge_next_online(h, 1, 30.0) == Approx(75.0));
  CHECK(edge_next_online(h, 0, 10.0) == 10.0);
  h.availability = EdgeAvailability::always;
  CHECK(edge_online(h, 2, 0.0));
  CHECK(edge_next_offline(h, 2, 0.0) == kNever);
}

TEST_CASE("two edges of two clients, two edge rounds per cloud round, match the hand-computed models") {
  // The fake client returns its model plus (id + 1), with 100 samples. Edge 0 (clients 0, 1) from
  // 0: (1 + 2) / 2 = 1.5, then 1.5 + 1.5 = 3; edge 1 (clients 2, 3): 3.5, then 7. The cloud weighs
  // the edges by their 200 samples each: (3 + 7) / 2 = 5. Cloud round 2 from 5: edges 8 and 12,
  // the cloud 10.
  Sim sim(kTwoEdges, {{"evaluation.every", "1"}});
  sim.run();
  REQUIRE(sim.host.finished);
  REQUIRE(sim.host.reports.size() == 2);
  CHECK(sim.host.evaluated == std::vector<double>{5.0, 10.0});
  const auto& r = sim.host.reports[0];
  CHECK(r.cohort == std::vector<std::uint32_t>{0, 1, 2, 3, 0, 1, 2, 3});  // wave by wave, edge by edge
  CHECK(r.aggregated == std::vector<std::uint32_t>{0, 1, 2, 3});
  CHECK(r.num_updates == 8);
  CHECK(r.staleness == std::vector<std::uint64_t>(8, 0));  // the edges' sync rounds: nothing stale
  CHECK(r.edges_sampled == std::vector<std::uint32_t>{0, 1});
  CHECK(r.edges_reported == std::vector<std::uint32_t>{0, 1});
  CHECK(r.edge_updates == std::vector<std::uint32_t>{4, 4});
  CHECK(r.edge_weight == std::vector<double>{0.5, 0.5});
  CHECK(r.edge_participation_bias == 0.0);  // the edges weigh what their samples do
  // A task: 1000 bytes down at 1.25e7 B/s, 0.05 s each way, 10 s of compute, 500 bytes up at
  // 1.25e6 B/s. The edge's two rounds run one after the other; the cloud link takes no time.
  const double task = 1000 / 1.25e7 + 0.05 + 10.0 + 0.05 + 500 / 1.25e6;
  CHECK(r.edge_arrival[0] == Approx(2 * task).epsilon(1e-12));
  CHECK(r.edge_rounds_run == std::vector<std::uint32_t>{2, 2});
  CHECK(r.edge_busy_seconds[1] == Approx(2 * task).epsilon(1e-12));
  CHECK(r.time_end == Approx(2 * task).epsilon(1e-12));
  // Each client's share of the cloud's step: its edge's weight 1/2 times its mean share (1/2).
  CHECK(sim.host.reports[1].time_start == r.time_end);
}

TEST_CASE("an edge's server takes hierarchy.aggregation_seconds per update after each edge round") {
  // As above, each edge round aggregating two updates: 2 s more per edge round at every edge,
  // 4 s at edge b, named with its own value.
  Sim sim(test::kTwoGroups + R"(
[hierarchy]
edge_rounds = 2
assign = "group"
aggregation_seconds = 1.0
[hierarchy.edge.a]
[hierarchy.edge.b]
aggregation_seconds = 2.0
)",
          {{"federation.rounds", "1"}});
  sim.run();
  const double task = 1000 / 1.25e7 + 0.05 + 10.0 + 0.05 + 500 / 1.25e6;
  const auto& r = sim.host.reports[0];
  CHECK(r.edge_arrival[0] == Approx(2 * task + 4.0).epsilon(1e-12));
  CHECK(r.edge_arrival[1] == Approx(2 * task + 8.0).epsilon(1e-12));
  CHECK(r.edge_busy_seconds[1] == Approx(2 * task + 8.0).epsilon(1e-12));
  CHECK(r.time_end == Approx(2 * task + 8.0).epsilon(1e-12));
  // Edge b's second round starts once its server is done with the first.
  CHECK(sim.event(0, 2, "selected").time == 0.0);
  bool second = false;
  for (const auto& c : r.clients)
    second = second || (c.client_id == 2 && name_of(c.event) == "selected" && c.time == Approx(task + 4.0));
  CHECK(second);
}

TEST_CASE("the edges' k-th rounds run side by side: one wave of jobs, answered in any order") {
  Sim sim(kTwoEdges, {{"evaluation.every", "1"}});
  sim.driver->start();
  std::vector<std::uint32_t> first_wave;
  for (const auto& [job, c, task] : sim.host.launched) first_wave.push_back(c);
  CHECK(first_wave == std::vector<std::uint32_t>{0, 1, 2, 3});  // both edges' first rounds at once
  sim.host.pump(/*reverse=*/true);                              // edge 1's jobs answer first: the bits are the same
  REQUIRE(sim.host.finished);
  CHECK(sim.host.evaluated == std::vector<double>{5.0, 10.0});
}

TEST_CASE("one edge holding every client with one edge round is the flat federation") {
  const std::vector<Override> common{
      {"evaluation.every", "1"}, {"simulation.dropout", "0.3"}, {"federation.rounds", "4"}};
  auto hierarchical = common;
  hierarchical.push_back({"hierarchy.edges", "1"});
  Sim flat(test::kFourClients, common);
  Sim one(test::kFourClients, hierarchical);
  flat.run();
  one.run();
  CHECK(one.host.evaluated == flat.host.evaluated);
  CHECK(one.host.requests == flat.host.requests);
  REQUIRE(one.host.reports.size() == flat.host.reports.size());
  std::uint32_t dropped = 0;
  for (const auto& r : flat.host.reports) dropped += r.dropped;
  CHECK(dropped > 0);  // the comparison covers drop-outs
  for (std::size_t i = 0; i < flat.host.reports.size(); ++i) {
    const auto &a = flat.host.reports[i], &b = one.host.reports[i];
    CHECK(a.cohort == b.cohort);
    CHECK(a.aggregated == b.aggregated);
    CHECK(a.time_end == b.time_end);
    CHECK(a.late == b.late);
    CHECK(a.dropped == b.dropped);
    CHECK(std::memcmp(&a.participation_bias, &b.participation_bias, sizeof(double)) == 0);
    CHECK(b.edges_sampled == std::vector<std::uint32_t>{0});
    CHECK(a.edge_updates.empty());
  }
}

TEST_CASE("an edge that goes offline before its model reaches the cloud loses the round") {
  // Edge 0 is online for [0, 20) of every 40 s, edge 1 for [20, 40). Cloud round 1 at 0: only
  // edge 0 is online; its round takes ~10.1 s and reports. Round 2 at ~10.1: edge 0's next round
  // would arrive after 20, when it goes offline: lost, and the cloud learns it at 20.
  Sim sim(kTwoEdges, {{"evaluation.every", "1"},
                      {"hierarchy.edge_rounds", "1"},
                      {"hierarchy.availability", "diurnal"},
                      {"hierarchy.period", "40"},
                      {"hierarchy.online_fraction", "0.5"}});
  sim.run();
  REQUIRE(sim.host.reports.size() == 2);
  const auto &first = sim.host.reports[0], &second = sim.host.reports[1];
  CHECK(first.edges_sampled == std::vector<std::uint32_t>{0});
  CHECK(first.edges_reported == std::vector<std::uint32_t>{0});
  CHECK(sim.host.evaluated[0] == 1.5);
  // Edge 0 alone carried the cloud's step, where the edges' samples say half each.
  CHECK(first.edge_participation_bias == 0.5);
  CHECK(second.edge_participation_bias == 0.5);  // the window still holds round 1's weights
  CHECK(second.edges_lost == std::vector<std::uint32_t>{0});
  CHECK(second.edges_reported.empty());
  CHECK(second.time_end == 20.0);
  CHECK(sim.host.evaluated[1] == 1.5);  // nothing reached the cloud
  CHECK(std::isnan(second.edge_arrival[0]));
  // summary.json counts the edges' fates over the run; a flat run has no edges object.
  std::vector<RoundFacts> facts;
  for (const auto& r : sim.host.reports) facts.push_back(facts_of(r));
  const auto summary = summary_fields_json(summarize(facts, {}));
  CHECK(summary["edges"]["sampled"] == 2);
  CHECK(summary["edges"]["reported"] == 1);
  CHECK(summary["edges"]["lost"] == 1);
  CHECK(summary["edges"]["mean_participation_bias"] == 0.5);
  Sim flat(test::kFourClients);
  flat.run();
  std::vector<RoundFacts> flat_facts;
  for (const auto& r : flat.host.reports) flat_facts.push_back(facts_of(r));
  CHECK_FALSE(summary_fields_json(summarize(flat_facts, {})).contains("edges"));
}

TEST_CASE("an upload that an edge's cycle interrupts starts over when the edge is back") {
  Scenario s;
  auto& h = s.hierarchy;
  h.edges = 2;
  h.availability = EdgeAvailability::diurnal;
  h.period = 40.0;
  h.online_fraction = 0.5;  // edge 0 online [0, 20) of every 40 s
  EdgePresence presence(s);
  CHECK(presence.upload_arrival(0, 5.0, 5.0) == 10.0);
  CHECK(presence.upload_arrival(0, 18.0, 5.0) == 45.0);    // cut at 20, sent again from 40
  CHECK(presence.upload_arrival(0, 20.2, 5.0) == 45.0);    // offline when ready: waits for 40
  CHECK(presence.upload_arrival(0, 0.0, 25.0) == kNever);  // longer than any online stretch
}

TEST_CASE("keep_work: an edge that goes offline sends what it has once it is back") {
  // Edge 0 is online [0, 20) of every 40 s. Three edge rounds of ~10.1 s each: the third would
  // start at ~20.2, offline. Losing its work, the cloud keeps 0; keeping it, edge 0 sends its
  // model after two rounds (0 -> 1.5 -> 3) when it is back at 40.
  const std::vector<Override> cycle{{"evaluation.every", "1"},      {"federation.rounds", "1"},
                                    {"hierarchy.edge_rounds", "3"}, {"hierarchy.availability", "diurnal"},
                                    {"hierarchy.period", "40"},     {"hierarchy.online_fraction", "0.5"}};
  Sim lose(kTwoEdges, cycle);
  lose.run();
  CHECK(lose.host.reports[0].edges_lost == std::vector<std::uint32_t>{0});
  CHECK(lose.host.evaluated == std::vector<double>{0.0});
  auto keeping = cycle;
  keeping.push_back({"hierarchy.keep_work", "true"});
  Sim keep(kTwoEdges, keeping);
  keep.run();
  const auto& r = keep.host.reports[0];
  CHECK(r.edges_reported == std::vector<std::uint32_t>{0});
  CHECK(r.edge_updates[0] == 4);  // two rounds of two clients
  CHECK(r.edge_arrival[0] == 40.0);
  CHECK(r.edge_rounds_run[0] == 2);  // it stopped before its third
  CHECK(r.edge_busy_seconds[0] < 40.0);
  CHECK(r.time_end == 40.0);
  CHECK(keep.host.evaluated == std::vector<double>{3.0});
  // With a cloud deadline before the edge is back, the kept model is late.
  keeping.push_back({"hierarchy.deadline", "30"});
  Sim late(kTwoEdges, keeping);
  late.run();
  CHECK(late.host.reports[0].edges_late == std::vector<std::uint32_t>{0});
  CHECK(late.host.reports[0].time_end == 30.0);
}

TEST_CASE("the cloud's deadline turns a slow edge's model away") {
  Sim sim(kTwoEdges, {{"hierarchy.edge_rounds", "1"}, {"hierarchy.deadline", "10.05"}});
  sim.run();
  CHECK(sim.host.reports[0].edges_late == std::vector<std::uint32_t>{0, 1});
  CHECK(sim.host.reports[0].time_end == 10.05);
  CHECK(sim.host.reports[0].aggregated.empty());
}

TEST_CASE("hierarchies that cannot run are refused with the reason") {
  const std::string base = "[federation]\nclients = 4\n[hierarchy]\nedges = 2\n";
  CHECK_THAT(error_of(base + "[algorithm]\nname = \"fedavgm\"\n"),
             Catch::Contains("cannot run 'fedavgm' at the edge tier") && Catch::Contains("fedavg, "));
  CHECK_THAT(error_of(base + "[simulation]\nmode = \"fedbuff\"\n"), Catch::Contains("sync rounds at the edges"));
  CHECK_THAT(error_of(base, {{"hierarchy.edges", "5"}}), Catch::Contains("an edge would hold no client"));
  CHECK_THAT(error_of(base, {{"hierarchy.edge_rounds", "0"}}), Catch::Contains("hierarchy.edge_rounds"));
  CHECK_THAT(error_of(base, {{"hierarchy.edges_per_round", "3"}}), Catch::Contains("more than the 2 edges"));
  CHECK_THAT(error_of(base, {{"privacy.mode", "central"}}), Catch::Contains("one tier of aggregation"));
  CHECK_THAT(error_of(base, {{"simulation.late_updates", "stale"}}), Catch::Contains("use discard"));
  CHECK_THAT(error_of(base + "[algorithm]\nname = \"fedskc\"\n"), Catch::Contains("at the edge tier"));
}

}  // namespace drift
