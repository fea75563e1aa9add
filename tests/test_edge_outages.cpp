// [[timeline]] entries with `edge` (docs/hierarchy.md#scripted-outages): an edge taken offline at
// a time and brought back, over its own availability rule, against hand-computed fates.
#include <cmath>

#include "engine/core/error.hpp"
#include "engine/population/edge_presence.hpp"
#include "engine/sim/round_estimate.hpp"
#include "scenario_error.hpp"
#include "sim_harness.hpp"

namespace drift {
namespace {

using test::error_of;
using test::Sim;

// Edge a holds clients 0 and 1, edge b clients 2 and 3; b is out from 5 s to 30 s.
const std::string kOutageEdges = test::kTwoGroups + R"(
[hierarchy]
edge_rounds = 1
assign = "group"
[hierarchy.edge.a]
[hierarchy.edge.b]
)";
const std::string kOutageEntries = R"(
[[timeline]]
at_time = 5.0
action = "offline"
edge = "b"
[[timeline]]
at_time = 30.0
action = "online"
edge = "b"
)";

}  // namespace

TEST_CASE("a scripted outage takes an edge offline over its own rule, and brings it back") {
  const auto s = parse_scenario(
      kOutageEdges + kOutageEntries + "[[timeline]]\nat_time = 50.0\naction = \"offline\"\nedge = 0\n", "o.toml");
  EdgePresence presence(s);
  CHECK(presence.online(1, 4.9));
  CHECK_FALSE(presence.online(1, 5.0));
  CHECK(presence.next_offline(1, 0.0) == 5.0);
  CHECK(presence.next_online(1, 10.0) == 30.0);
  CHECK(presence.online(1, 30.0));
  CHECK(presence.next_offline(1, 30.0) == kNever);
  CHECK(presence.next_online(0, 60.0) == kNever);       // edge 0 (a, by a TOML integer) is out for good from 50
  CHECK(presence.upload_arrival(1, 4.0, 2.0) == 32.0);  // cut at 5, sent again from 30
}

TEST_CASE("an edge out mid-round loses it and is not sampled until it is back") {
  // Round 1 at 0: both sampled; b's model would arrive at T > 5: lost. Rounds 2 and 3 (from T and
  // 2T) see b out; round 4 at 3T > 30 has it back.
  Sim sim(kOutageEdges + kOutageEntries, {{"evaluation.every", "1"}, {"federation.rounds", "4"}});
  sim.run();
  REQUIRE(sim.host.reports.size() == 4);
  const auto& r = sim.host.reports;
  CHECK(r[0].edges_reported == std::vector<std::uint32_t>{0});
  CHECK(r[0].edges_lost == std::vector<std::uint32_t>{1});
  CHECK(r[1].edges_sampled == std::vector<std::uint32_t>{0});
  CHECK(r[2].edges_sampled == std::vector<std::uint32_t>{0});
  CHECK(r[3].time_start == Approx(3 * test::kTaskSeconds).epsilon(1e-12));
  CHECK(r[3].edges_sampled == std::vector<std::uint32_t>{0, 1});
  CHECK(sim.host.evaluated[0] == 1.5);  // edge a's model alone
  // The clients' own world is untouched: the timeline's edge entries take no group offline.
  CHECK(r[1].cohort == std::vector<std::uint32_t>{0, 1});

  // Under the buffered cloud b's first loop is lost too, and it pulls again at 30.
  Sim buffered(kOutageEdges + kOutageEntries,
               {{"federation.rounds", "4"}, {"hierarchy.cloud", "\"fedbuff\""}, {"hierarchy.buffer", "1"}});
  buffered.run();
  bool b_reported = false;
  for (const auto& report : buffered.host.reports)
    if (!report.edges_reported.empty() && report.edges_reported.front() == 1) {
      CHECK(report.edge_arrival[1] == Approx(30.0 + test::kTaskSeconds).epsilon(1e-12));
      b_reported = true;
    }
  CHECK(b_reported);
}

TEST_CASE("a synchronous cloud whose edges are all out for good ends, saying why") {
  // a is out from the start and b from 5, neither back: round 1 runs b, whose model would arrive
  // after 5 (lost); round 2 finds no edge, and none will come back.
  const std::string for_good = R"(
[[timeline]]
at_time = 0.0
action = "offline"
edge = "a"
[[timeline]]
at_time = 5.0
action = "offline"
edge = "b"
)";
  Sim sim(kOutageEdges + for_good, {{"federation.rounds", "10"}});
  sim.run();
  REQUIRE(sim.host.finished);
  CHECK(sim.host.status == RunStatus::ended);
  CHECK_THAT(sim.host.reason, Catch::StartsWith("no edge can take part from cloud round 2 on"));
  CHECK(sim.host.reports.size() == 1);
  // The same edges under an availability model that never brings one back.
  Sim never(kOutageEdges, {{"federation.rounds", "10"},
                           {"hierarchy.availability", "\"model\""},
                           {"hierarchy.availability_model.model", "\"bernoulli\""},
                           {"hierarchy.availability_model.p", "0.0"}});
  never.run();
  CHECK(never.host.status == RunStatus::ended);
  CHECK_THAT(never.host.reason, Catch::StartsWith("no edge can take part from cloud round 1 on"));
  CHECK(never.host.reports.empty());
}

TEST_CASE("edge outages that cannot be scripted are refused with the reason") {
  const auto entry = [](const std::string& keys) { return "[[timeline]]\naction = \"offline\"\n" + keys; };
  CHECK_THAT(error_of(kOutageEdges + entry("at_time = 1.0\nedge = \"c\"\n")),
             Catch::Contains("not one of the 2 edges"));
  CHECK_THAT(error_of(kOutageEdges + entry("at_round = 2\nedge = \"a\"\n")), Catch::Contains("set by at_time"));
  CHECK_THAT(error_of(kOutageEdges + entry("at_time = 1.0\nedge = 1.5\n")),
             Catch::Contains("edge must be a string or a whole number, not floating-point"));
  CHECK_THAT(error_of(kOutageEdges + entry("at_time = 1.0\nedge = \"a\"\ngroup = \"a\"\n")),
             Catch::Contains("an edge or a group, not both"));
  CHECK_THAT(error_of(kOutageEdges + "[[timeline]]\naction = \"speed\"\nvalue = 2.0\nat_time = 1.0\nedge = \"a\"\n"),
             Catch::Contains("not action speed"));
  CHECK_THAT(error_of(test::kTwoGroups + entry("at_time = 1.0\nedge = \"0\"\n")),
             Catch::Contains("the federation is flat"));
}

TEST_CASE("validate warns of edge loops that a deadline or an edge's online stretch cuts") {
  // Two edges of two clients, each task about 10 s: a loop of two edge rounds takes about 20 s.
  const auto warnings = [](const std::vector<Override>& o) {
    std::vector<Override> all{{"hierarchy.edges", "2"}, {"hierarchy.edge_rounds", "2"}};
    all.insert(all.end(), o.begin(), o.end());
    const auto s = parse_scenario(test::kFourClients, "w.toml", all);
    const auto p = build_population(s, test::equal_histograms(4, 100));
    std::string text;
    for (const auto& w : virtual_time_warnings(s, estimate_rounds(s, p, 1000))) text += w + "\n";
    return text;
  };
  const std::vector<Override> short_days{
      {"hierarchy.availability", "\"diurnal\""}, {"hierarchy.period", "40.0"}, {"hierarchy.online_fraction", "0.3"}};
  const auto cut = warnings(short_days);
  CHECK_THAT(cut, Catch::Contains("every edge is online for stretches of at most 12") &&
                      Catch::Contains("2 edge round(s)") && Catch::Contains("keep_work = false"));
  CHECK_THAT(cut, !Catch::Contains("never step"));
  auto buffered = short_days;
  buffered.insert(buffered.end(), {{"hierarchy.cloud", "\"fedbuff\""}, {"hierarchy.buffer", "1"}});
  CHECK_THAT(warnings(buffered), Catch::Contains("the buffered cloud may never step"));
  auto kept = short_days;
  kept.push_back({"hierarchy.keep_work", "true"});
  CHECK(warnings(kept).empty());
  CHECK(warnings({{"hierarchy.availability", "\"diurnal\""},
                  {"hierarchy.period", "100.0"},
                  {"hierarchy.online_fraction", "0.9"}})
            .empty());
  CHECK_THAT(warnings({{"hierarchy.deadline", "15.0"}}), Catch::Contains("longer than hierarchy.deadline (15") &&
                                                             Catch::Contains("most edge models will arrive late"));
  CHECK(warnings({{"hierarchy.deadline", "60.0"}}).empty());
}

}  // namespace drift
