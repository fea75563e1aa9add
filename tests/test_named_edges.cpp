// [hierarchy.edge.NAME] (docs/hierarchy.md#named-edges): edges with their own link and
// availability, the groups they hold, and their refusals.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include "data_files.hpp"
#include "engine/core/error.hpp"
#include "engine/population/topology.hpp"
#include "engine/study/edge_figures.hpp"
#include "scenario_error.hpp"
#include "sim_harness.hpp"

namespace drift {
namespace {

using test::error_of;
using test::Sim;

const std::string& kGroups = test::kTwoGroups;

std::string population_error(const std::string& text) {
  try {
    build_population(parse_scenario(text, "h.toml"), test::equal_histograms(4, 100));
  } catch (const UserError& e) {
    return e.what();
  }
  FAIL("expected a UserError");
  return "";
}

}  // namespace

TEST_CASE("named edges start from the [hierarchy] values and set their own") {
  const auto s = parse_scenario(kGroups + R"(
[hierarchy]
assign = "group"
latency = 0.5
availability = "diurnal"
period = 100.0
[hierarchy.edge.b]
latency = 3.0
phase = 0.25
[hierarchy.edge.a]
availability = "always"
up_bandwidth = 4.0
)",
                                "h.toml");
  const auto& h = s.hierarchy;
  REQUIRE(h.edges == 2);                                      // counted from the tables
  const auto a = edge_profile(h, 0), b = edge_profile(h, 1);  // name order
  CHECK(a.name == "a");
  CHECK(a.latency == 0.5);
  CHECK(a.up_bandwidth == 4.0);
  CHECK(a.availability == EdgeAvailability::always);
  CHECK(b.name == "b");
  CHECK(b.latency == 3.0);
  CHECK(b.availability == EdgeAvailability::diurnal);
  CHECK(b.period == 100.0);
  CHECK(b.online_fraction == 0.5);
  CHECK(b.phase == 0.25);
  CHECK(edge_label(h, 1) == "edge 'b'");
  // b is online while frac(t / 100 + 0.25) < 0.5: [0, 25) and [75, 125).
  CHECK(edge_online(h, 1, 24.9));
  CHECK_FALSE(edge_online(h, 1, 25.0));
  CHECK(edge_next_online(h, 1, 30.0) == Approx(75.0));
  CHECK(edge_next_offline(h, 0, 30.0) == kNever);
  CHECK(expected_online_edges(h) == 1.5);
  // Numbered edges: the [hierarchy] values, phase e / edges.
  const auto plain = parse_scenario("[federation]\nclients = 4\n[hierarchy]\nedges = 4\nlatency = 2.0\n", "h.toml");
  CHECK(edge_profile(plain.hierarchy, 3).latency == 2.0);
  CHECK(edge_profile(plain.hierarchy, 3).phase == 0.75);
  CHECK(edge_label(plain.hierarchy, 3) == "edge 3");
  // hierarchy.edges = 0 beside named edges: the flat federation, said in a warning.
  const auto flat = parse_scenario(kGroups + "[hierarchy.edge.a]\n", "h.toml", {{"hierarchy.edges", "0"}});
  CHECK_FALSE(flat.hierarchy.enabled());
  CHECK(flat.hierarchy.named.empty());
  CHECK(std::count(flat.warnings.begin(), flat.warnings.end(),
                   "hierarchy.edges = 0: a flat federation; the 1 [hierarchy.edge.NAME] tables are not used") == 1);
}

TEST_CASE("an edge holds the group of its name, or the one its group key names") {
  const auto by_name = build_population(
      parse_scenario(kGroups + "[hierarchy]\nassign = \"group\"\n[hierarchy.edge.a]\n[hierarchy.edge.b]\n", "h.toml"),
      test::equal_histograms(4, 100));
  CHECK(by_name.edge == std::vector<std::uint32_t>{0, 0, 1, 1});
  const auto swapped = build_population(parse_scenario(kGroups + R"(
[hierarchy]
assign = "group"
[hierarchy.edge.north]
group = "b"
[hierarchy.edge.south]
group = "a"
)",
                                                       "h.toml"),
                                        test::equal_histograms(4, 100));
  CHECK(swapped.edge == std::vector<std::uint32_t>{1, 1, 0, 0});  // north (edge 0) holds clients 2 and 3
}

TEST_CASE("each named edge's link times its own model's trip") {
  // One edge round each: a task takes 1000 B / 1.25e7 B/s + 0.05 + 10 s + 0.05 + 500 B / 1.25e6 B/s.
  // The model is one float64 (8 bytes). Edge a: 1 s down, the task, 1 s up. Edge b: 3 s down,
  // the task, 3 s plus 8 B at 4 B/s up.
  Sim sim(kGroups + R"(
[hierarchy]
assign = "group"
[hierarchy.edge.a]
latency = 1.0
[hierarchy.edge.b]
latency = 3.0
up_bandwidth = 4.0
)");
  sim.run();
  REQUIRE(sim.host.finished);
  const auto& r = sim.host.reports[0];
  const double task = 1000 / 1.25e7 + 0.05 + 10.0 + 0.05 + 500 / 1.25e6;
  CHECK(r.edges_reported == std::vector<std::uint32_t>{0, 1});
  CHECK(r.edge_arrival[0] == Approx(1.0 + task + 1.0).epsilon(1e-12));
  CHECK(r.edge_arrival[1] == Approx(3.0 + task + 3.0 + 2.0).epsilon(1e-12));
  CHECK(r.time_end == r.edge_arrival[1]);
}

TEST_CASE("named edges that cannot be read or mapped are refused with the reason") {
  const std::string base = kGroups + "[hierarchy]\nassign = \"group\"\n";
  CHECK_THAT(error_of(base + "edges = 3\n[hierarchy.edge.a]\n[hierarchy.edge.b]\n"),
             Catch::Contains("hierarchy.edges = 3 but 2 edges are named"));
  CHECK_THAT(error_of(base + "[hierarchy.edge.a]\nlatncy = 1.0\n"),
             Catch::Contains("unknown key 'hierarchy.edge.a.latncy'") &&
                 Catch::Contains("did you mean 'hierarchy.edge.a.latency'"));
  CHECK_THAT(error_of(base + "edge = 3\n"), Catch::Contains("'hierarchy.edge' must hold tables"));
  CHECK_THAT(error_of(base + "[hierarchy.edge.\"a b\"]\n"), Catch::Contains("letters, digits, '_' and '-' only"));
  CHECK_THAT(error_of(base + "[hierarchy.edge.a]\nphase = 1.5\n"), Catch::Contains("hierarchy.edge.a.phase"));
  CHECK_THAT(error_of(base + "[hierarchy.edge.a]\navailability = \"hourly\"\n"),
             Catch::Contains("unknown availability 'hourly'"));
  CHECK_THAT(
      population_error(base + "[hierarchy.edge.a]\n[hierarchy.edge.c]\n"),
      Catch::Contains("edge 'c' holds group 'c', which the scenario does not define") && Catch::Contains("a, b"));
  CHECK_THAT(population_error(base + "[hierarchy.edge.a]\n[hierarchy.edge.x]\ngroup = \"a\"\n"),
             Catch::Contains("edge 'a' and edge 'x' both hold group 'a'"));
  CHECK_THAT(population_error(base + "[hierarchy.edge.a]\n"),
             Catch::Contains("client 2 is in group 'b', which no edge holds"));
  CHECK_THAT(population_error(kGroups + "[hierarchy.edge.a]\n[hierarchy.edge.b]\n[hierarchy.edge.c]\n"
                                        "[hierarchy.edge.d]\n[hierarchy.edge.e]\n"),
             Catch::Contains("an edge would hold no client"));
}

}  // namespace drift

namespace drift {

TEST_CASE("the edges figure names the rows of named edges") {
  const auto run = test::fresh_folder("edge-figure");
  std::filesystem::create_directories(run / "figures");
  RoundReport r;
  r.round = 1;
  r.edge_updates = {2, 0};
  r.edges_reported = {0};
  r.edges_lost = {1};
  const std::string header = "edge,name,clients,num_samples\n";
  test::write_file(run / "edges.csv", header + "0,city,20,2000\n1,village,10,900\n");
  CHECK_THAT(edge_fate_figure({r}, run / "figures").body, Catch::Contains("set ytics ('city' 0, 'village' 1)"));
  test::write_file(run / "edges.csv", header + "0,,20,2000\n1,,10,900\n");
  CHECK_THAT(edge_fate_figure({r}, run / "figures").body, !Catch::Contains("ytics"));
  // Without moves there is no clients figure; with them, a line per edge, named where edges are.
  CHECK(edge_clients_figure({r}, run / "figures").name.empty());
  auto moved = r;
  moved.round = 2;
  r.edge_clients = {20, 10};
  moved.edge_clients = {25, 5};
  test::write_file(run / "edges.csv", header + "0,city,20,2000\n1,village,10,900\n");
  const auto figure = edge_clients_figure({r, moved}, run / "figures");
  CHECK_THAT(figure.body, Catch::Contains("using 1:3 with steps lw 2 title 'village'"));
  std::ifstream dat(run / "figures" / "edge_clients.dat");
  const std::string rows((std::istreambuf_iterator<char>(dat)), std::istreambuf_iterator<char>());
  CHECK(rows == "# round clients_of_edge_0 clients_of_edge_1 ...\n1 20 10\n2 25 5\n");
  std::filesystem::remove_all(run);
}

}  // namespace drift

namespace drift {

TEST_CASE("a file maps each client to an edge by number or by name, and bad maps are refused") {
  const auto dir = test::fresh_folder("edge-map");
  const auto map = (dir / "edges.csv").string();
  const auto with_map = [&](const std::string& rows, const std::string& edges) {
    test::write_file(map, "client,edge\n" + rows);
    return kGroups + "[hierarchy]\nassign = \"file\"\nfile = \"" + map + "\"\n" + edges;
  };
  const auto population = [](const std::string& text) {
    return build_population(parse_scenario(text, "h.toml"), test::equal_histograms(4, 100));
  };
  CHECK(population(with_map("0,1\n1,0\n2,1\n3,0\n", "edges = 2\n")).edge == std::vector<std::uint32_t>{1, 0, 1, 0});
  const std::string named = "[hierarchy.edge.east]\n[hierarchy.edge.west]\n";
  CHECK(population(with_map("3,west\n2,east\n1,east\n0,1\n", named)).edge == std::vector<std::uint32_t>{1, 0, 0, 1});

  const auto refusal = [&](const std::string& rows, const std::string& edges = "edges = 2\n") {
    try {
      population(with_map(rows, edges));
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    FAIL("expected a UserError for " << rows);
    return std::string();
  };
  CHECK_THAT(refusal("0,0\n1,0\n2,1\n"), Catch::Contains("client 3 has no row"));
  CHECK_THAT(refusal("0,0\n1,0\n2,1\n3,1\n2,0\n"), Catch::Contains(":6: client 2 has a second row"));
  CHECK_THAT(refusal("0,0\n1,0\n2,1\n3,2\n"),
             Catch::Contains(":5: edge '2' is not one of the 2 edges (numbers 0 to 1)"));
  CHECK_THAT(refusal("0,east\n1,north\n2,west\n3,west\n", named),
             Catch::Contains(":3: edge 'north' is not one of the 2 edges (names east, west)"));
  CHECK_THAT(refusal("0,0\n1,0\n2,1\n7,1\n"), Catch::Contains("client 7 is past the 4 clients"));
  CHECK_THAT(refusal("0,0\n1,0\n2,1\n3,1.5\n"), Catch::Contains("edge '1.5' is not one of"));
  CHECK_THAT(refusal("0,0\n1,0\n2,0\n3,0\n"), Catch::Contains("edge 1 holds no client under assign = file"));
  CHECK_THAT(error_of(kGroups + "[hierarchy]\nedges = 2\nassign = \"file\"\n"),
             Catch::Contains("needs hierarchy.file"));

  // The resolved scenario records the map's digest: a resume or a worker reading other bytes is refused.
  const auto resolved = parse_scenario(with_map("0,1\n1,0\n2,1\n3,0\n", "edges = 2\n"), "h.toml");
  REQUIRE(resolved.hierarchy.file_digest.size() == 16);
  CHECK(parse_scenario(resolved.resolved_toml, "again.toml").hierarchy.file_digest == resolved.hierarchy.file_digest);
  test::write_file(map, "client,edge\n0,0\n1,1\n2,0\n3,1\n");
  CHECK_THAT(error_of(resolved.resolved_toml), Catch::Contains("the clients' edge map changed since the run started"));
  std::filesystem::remove_all(dir);
}

}  // namespace drift

namespace drift {

TEST_CASE("edges come and go by a client availability model: a trace, a participation process") {
  // The trace puts edge 0 online for [0, 20) and edge 1 for [20, 40): the diurnal case of
  // test_hierarchy.cpp, the same fates and times.
  const auto dir = test::fresh_folder("edge-trace");
  const auto trace = (dir / "edges.csv").string();
  test::write_file(trace, "client,start,end\n0,0,20\n1,20,40\n0,40,60\n");
  Sim sim(kGroups +
              "[hierarchy]\nassign = \"group\"\nedges = 2\navailability = \"model\"\n"
              "[hierarchy.availability_model]\nmodel = \"trace\"\ntrace = \"" +
              trace + "\"\n",
          {{"evaluation.every", "1"}});
  sim.run();
  REQUIRE(sim.host.reports.size() == 2);
  CHECK(sim.host.reports[0].edges_reported == std::vector<std::uint32_t>{0});
  CHECK(sim.host.reports[1].edges_lost == std::vector<std::uint32_t>{0});
  CHECK(sim.host.reports[1].time_end == 20.0);
  CHECK(sim.host.evaluated == std::vector<double>{1.5, 1.5});
  std::filesystem::remove_all(dir);

  // Bernoulli edges: each cloud round, edge e takes part with probability 0.5, drawn from the
  // scenario's seed; the same run twice is the same, and some rounds miss an edge.
  const std::string bernoulli =
      kGroups +
      "[hierarchy]\nassign = \"group\"\nedges = 2\navailability = \"model\"\n"
      "[hierarchy.availability_model]\nmodel = \"bernoulli\"\nprobability = \"fixed\"\np = 0.5\n";
  const std::vector<Override> rounds{{"federation.rounds", "12"}};
  Sim first(bernoulli, rounds), second(bernoulli, rounds);
  first.run();
  second.run();
  std::vector<std::size_t> sampled, again;
  for (const auto& r : first.host.reports) sampled.push_back(r.edges_sampled.size());
  for (const auto& r : second.host.reports) again.push_back(r.edges_sampled.size());
  CHECK(sampled == again);
  CHECK(std::count(sampled.begin(), sampled.end(), 2u) < 12);
  // No edge this round: the cloud round passes (a process's away edge may be back next round,
  // so the cloud looks again a tick later), and the model stays.
  for (const auto& r : first.host.reports)
    if (r.edges_sampled.empty()) CHECK((r.time_end - r.time_start < 1e-9 && r.num_updates == 0));

  CHECK_THAT(error_of(bernoulli + "probability_typo = 1\n"),
             Catch::Contains("unknown key 'hierarchy.availability_model.probability_typo'"));
  CHECK_THAT(error_of(kGroups + "[hierarchy]\nedges = 2\navailability = \"model\"\n[hierarchy.availability_model]\n"
                                "model = \"markv\"\n"),
             Catch::Contains("markov"));
  CHECK_THAT(error_of(kGroups + "[hierarchy]\nedges = 2\navailability = \"model\"\n[hierarchy.availability_model]\n"
                                "model = \"bernoulli\"\nprobability = \"label_dirichlet\"\n"),
             Catch::Contains("an edge has no labels of its own"));
}

}  // namespace drift
