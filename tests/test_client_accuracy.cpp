// Per-client evaluation of the global model (evaluation.per_client): each client's hits from
// per-sample results, the summary against hand-computed values, the report it fills, when it is
// due, and its metrics.jsonl object read back.
#include "catch_torch.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/compose/loader.hpp"
#include "engine/metrics/client_accuracy.hpp"
#include "engine/metrics/metrics_file.hpp"
#include "engine/metrics/report_sequence.hpp"
#include "engine/metrics/summary.hpp"
#include "engine/population/presence.hpp"
#include "engine/sim/round_rules.hpp"
#include "engine/study/summary_rows.hpp"

using namespace drift;

namespace {

// Seven test samples: client 0 holds [0, 2), client 1 none, client 2 [2, 5), client 3 [5, 7).
const std::vector<std::uint64_t> kStarts{0, 2, 2, 5, 7};

// Two ranges that cut client 2's split: hits 1 0 1 1 | 0 1 1.
std::vector<EvalResult> two_ranges() {
  EvalResult a{0, 4, 0.0, {3}, {4}, {1, 0, 1, 1}};
  EvalResult b{4, 7, 0.0, {2}, {3}, {0, 1, 1}};
  return {a, b};
}

}  // namespace

TEST_CASE("hits per client follow the clients' splits across ranges", "[client_accuracy]") {
  const auto hits = hits_per_client(two_ranges(), kStarts);
  CHECK(hits == std::vector<std::uint64_t>{1, 0, 2, 2});
  const auto accuracy = client_accuracies(hits, kStarts);
  CHECK(accuracy[0] == 0.5);
  CHECK(std::isnan(accuracy[1]));  // no held-out sample
  CHECK(accuracy[2] == Approx(2.0 / 3.0));
  CHECK(accuracy[3] == 1.0);
  auto missing = two_ranges();
  missing[1].hits.clear();
  CHECK_THROWS(hits_per_client(missing, kStarts));
}

TEST_CASE("the per-client summary matches hand-computed values", "[client_accuracy]") {
  // Accuracies 0.5, 2/3 and 1 (client 1 has no split); participation rates 0.4, 0.1, 0.2.
  const auto s = summarize_client_accuracy({1, 0, 2, 2}, kStarts, {0.4, 0.5, 0.1, 0.2});
  CHECK(s.mean == Approx((0.5 + 2.0 / 3.0 + 1.0) / 3.0));
  CHECK(s.weighted == Approx(5.0 / 7.0));                 // 5 hits of 7 samples
  CHECK(s.p10 == Approx(0.5 + 0.2 * (2.0 / 3.0 - 0.5)));  // 0.1 x (3 - 1) = 0.2 past the lowest
  CHECK(s.worst == 0.5);
  CHECK(s.participation_correlation == Approx(-0.5));
  // Equal rates say nothing: no correlation.
  CHECK(std::isnan(summarize_client_accuracy({1, 0, 2, 2}, kStarts, {0.3, 0.3, 0.3, 0.3}).participation_correlation));
  const auto none = summarize_client_accuracy({0}, {0, 0}, {0.5});
  CHECK(std::isnan(none.mean));
  CHECK(std::isnan(none.worst));
  CHECK(quantile({3, 1, 2, 4, 5}, 0.1) == Approx(1.4));
  CHECK(pearson({1, 2, 3}, {2, 4, 7}) == Approx(5.0 / std::sqrt(2.0 * 38.0 / 3.0)));
}

TEST_CASE("a report that carries participations gets its clients' accuracies", "[client_accuracy]") {
  ReportSequence seq(TestSetShape{1, {}, kStarts});
  RoundReport r;
  r.round = 10;
  r.client_participations = {4, 5, 1, 2};  // rates 0.4, 0.5, 0.1, 0.2
  const auto id = seq.add(r, 2);
  const auto parts = two_ranges();
  seq.add_evaluation(id, 1, parts[1]);
  seq.add_evaluation(id, 0, parts[0]);
  const auto out = seq.take_sendable().at(0);
  CHECK(out.test_accuracy == Approx(5.0 / 7.0));
  CHECK(out.client_summary);
  CHECK(out.client_accuracy.size() == 4);
  CHECK(out.client_accuracy_weighted == Approx(out.test_accuracy));
  CHECK(out.client_participation_correlation == Approx(-0.5));
  CHECK(out.clients_evaluated == 3);

  // Its line in metrics.jsonl: the summary in an object of its own, read back whole.
  const auto line = metrics_line(out, false);
  CHECK(line.find("\"client_accuracy_summary\":{") != std::string::npos);
  CHECK(line.find("\"client_participations\":[4,5,1,2]") != std::string::npos);
  CHECK(line.find("\"client_accuracy\":[0.5,null,") != std::string::npos);

  // A plain evaluation writes none of it.
  ReportSequence plain(TestSetShape{1, {}, kStarts});
  const auto plain_id = plain.add(RoundReport{}, 1);
  plain.add_evaluation(plain_id, 0, EvalResult{0, 7, 0.0, {5}, {7}, {}});
  const auto quiet = metrics_line(plain.take_sendable().at(0), false);
  CHECK(quiet.find("client_") == std::string::npos);
}

TEST_CASE("per-client evaluations fall on every Nth evaluation and the last round", "[client_accuracy]") {
  Scenario s;
  s.rounds = 25;
  s.evaluation.every = 2;
  CHECK_FALSE(per_client_due(s, 6));  // off
  s.evaluation.per_client = 3;
  for (std::uint32_t a : {6u, 12u, 24u, 25u}) CHECK(per_client_due(s, a));
  for (std::uint32_t a : {1u, 2u, 4u, 8u, 23u}) CHECK_FALSE(per_client_due(s, a));
}

TEST_CASE("evaluation.per_client needs clients' splits and a shared model", "[client_accuracy]") {
  const std::string base = "[federation]\nclients = 10\n[evaluation]\nper_client = 1\n";
  CHECK_THROWS_WITH(parse_scenario(base, "s.toml"), Catch::Contains("set data.client_test_fraction"));
  CHECK_NOTHROW(parse_scenario(base + "[data]\nclient_test_fraction = 0.25\n", "s.toml"));
  CHECK_THROWS_WITH(
      parse_scenario(base + "[data]\nclient_test_fraction = 0.25\n[algorithm]\nname = \"fedproto-ht\"\n", "s.toml"),
      Catch::Contains("scored per client already"));
}

TEST_CASE("held-out clients are summarised apart", "[client_accuracy]") {
  // Client 0 (0.5) and client 3 (1.0) held out: the rest is client 2 alone (2/3).
  const auto s = summarize_client_accuracy({1, 0, 2, 2}, kStarts, {0.0, 0.5, 0.1, 0.0}, {1, 0, 0, 1});
  CHECK(s.held_out == Approx(0.75));
  CHECK(s.mean == Approx(2.0 / 3.0));
  CHECK(s.weighted == Approx(2.0 / 3.0));
  CHECK(s.worst == Approx(2.0 / 3.0));
  CHECK(std::isnan(s.participation_correlation));  // one client left
  CHECK(std::isnan(summarize_client_accuracy({1, 0, 2, 2}, kStarts, {0.4, 0.5, 0.1, 0.2}).held_out));
}

TEST_CASE("held-out clients are drawn by the seed or taken by group, and never present", "[client_accuracy]") {
  Scenario s;
  s.seed = 7;
  s.held_out = 0.25;
  const auto a = synthetic_population(s, 20, 10);
  const auto b = synthetic_population(s, 20, 10);
  CHECK(a.held_out == b.held_out);  // the "held-out" stream
  CHECK(std::count(a.held_out.begin(), a.held_out.end(), 1) == 5);
  s.seed = 8;
  CHECK(synthetic_population(s, 20, 10).held_out != a.held_out);
  const Presence presence(a);
  CHECK(presence.present_count(0.0) == 15);
  for (std::uint32_t c = 0; c < 20; ++c) {
    CHECK(presence.present(c, 1e6) == !a.is_held_out(c));
    if (a.is_held_out(c)) CHECK(presence.leave_time(c) == 0.0);
  }
  CHECK(synthetic_population(Scenario{}, 20, 10).held_out.empty());

  s.held_out = 0.99;  // rounds to all 20
  CHECK_THROWS_WITH(synthetic_population(s, 20, 10), Catch::Contains("leaves no client to take part"));
  s.held_out = 0.0;
  s.held_out_group = "nowhere";
  CHECK_THROWS_WITH(synthetic_population(s, 20, 10), Catch::Contains("names no group"));
}

TEST_CASE("the last per-client evaluation reaches summary.json and the run page", "[client_accuracy]") {
  RoundReport plain;
  plain.round = 1;
  plain.evaluated = true;
  plain.test_accuracy = 0.5;
  auto measured = plain;
  measured.round = 2;
  measured.client_summary = true;
  measured.client_accuracy_p10 = 0.25;
  measured.client_participation_correlation = 0.5;
  measured.client_accuracy_held_out = std::nan("");  // nobody held out
  auto after = plain;
  after.round = 3;  // evaluated, but not per client: the last per-client figures stand
  const auto s = summarize({facts_of(plain), facts_of(measured), facts_of(after)}, {});
  CHECK(s.client_p10 == 0.25);
  const auto j = summary_fields_json(s);
  CHECK(j["client_accuracy"]["p10"] == 0.25);
  CHECK(j["client_accuracy"]["participation_correlation"] == 0.5);
  CHECK_FALSE(j["client_accuracy"].contains("held_out"));
  bool shown = false;
  for (const auto& [label, text] : readable_summary(j))
    if (label == "10th-percentile client accuracy") shown = text == "25.0 %";
  CHECK(shown);
  CHECK_FALSE(summary_fields_json(summarize({facts_of(plain)}, {})).contains("client_accuracy"));
}
