// The run summary in rounds and in virtual time, from hand-made metrics.jsonl files.
#include "catch_torch.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/core/error.hpp"
#include "engine/metrics/metrics_file.hpp"
#include "engine/metrics/summary.hpp"

#include <nlohmann/json.hpp>

using namespace drift;
namespace fs = std::filesystem;

namespace {

fs::path write_metrics(const std::string& name, const std::string& text) {
  const auto path = fs::temp_directory_path() / ("drift-test-summary-" + name + ".jsonl");
  std::ofstream(path) << text;
  return path;
}

// Eight sync rounds of 100 virtual seconds each, evaluated every round.
std::string eight_rounds() {
  const double acc[] = {0.1, 0.4, 0.55, 0.5, 0.72, 0.7, 0.81, 0.8};
  std::string text;
  for (int i = 0; i < 8; ++i) {
    text += "{\"round\":" + std::to_string(i + 1) + ",\"time_end\":" + std::to_string(100 * (i + 1)) +
            ",\"num_updates\":4,\"finished\":4,\"late\":1,\"dropped\":" + std::to_string(i % 2) +
            ",\"failed\":0,\"bytes_up\":100,\"wasted_compute_seconds\":2.5,\"discarded_samples\":10,\"cohort_tv\":" +
            std::to_string(0.1 * (i % 2 + 1)) + ",\"cohort_js\":0.2,\"change_tv\":" + (i == 0 ? "null" : "0.3") +
            ",\"test_accuracy\":" + std::to_string(acc[i]) + ",\"test_loss\":" + std::to_string(1.0 - acc[i]) + "}\n";
  }
  return text;
}

}  // namespace

TEST_CASE("summary: best round, mean of the last five, rounds and virtual time to each target", "[summary]") {
  const auto rounds = read_metrics_file(write_metrics("eight", eight_rounds()));
  REQUIRE(rounds.size() == 8);
  const auto s = summarize(rounds, {{0.5, 0.8, 0.9}, {}});
  CHECK(s.rounds == 8);
  CHECK(s.best_accuracy == 0.81);
  CHECK(s.best_round == 7);
  CHECK(s.final_accuracy == 0.8);
  CHECK(s.last5_mean_accuracy == Approx((0.5 + 0.72 + 0.7 + 0.81 + 0.8) / 5));
  CHECK(s.rounds_to[0].second == 3u);
  CHECK(s.rounds_to[1].second == 7u);
  CHECK_FALSE(s.rounds_to[2].second.has_value());
  CHECK(s.time_to[0].second == 300.0);
  CHECK(s.time_to[1].second == 700.0);
  CHECK_FALSE(s.time_to[2].second.has_value());
  CHECK(s.virtual_time == 800.0);
}

TEST_CASE("summary: accuracy at a virtual-time budget is the last evaluation at or before it", "[summary]") {
  const auto rounds = read_metrics_file(write_metrics("budgets", eight_rounds()));
  const auto s = summarize(rounds, {{}, {50.0, 100.0, 450.0, 800.0, 5000.0}});
  REQUIRE(s.accuracy_at.size() == 5);
  CHECK_FALSE(s.accuracy_at[0].second.has_value());  // nothing evaluated by 50 s
  CHECK(s.accuracy_at[1].second == 0.1);             // round 1 ends at exactly 100 s
  CHECK(s.accuracy_at[2].second == 0.5);             // round 4 (400 s), not round 5 (500 s)
  CHECK(s.accuracy_at[3].second == 0.8);
  CHECK(s.accuracy_at[4].second == 0.8);  // the run was over: the model a user had then
}

TEST_CASE("summary: totals, and means of the distances over the aggregations that have them", "[summary]") {
  const auto s = summarize(read_metrics_file(write_metrics("totals", eight_rounds())), {});
  CHECK(s.updates == 32);
  CHECK(s.late == 8);
  CHECK(s.dropped == 4);
  CHECK(s.wasted_compute_seconds == 20.0);
  CHECK(s.discarded_samples == 80);
  CHECK(s.mean_cohort_tv == Approx(0.15));
  CHECK(s.mean_change_tv == Approx(0.3));  // round 1 has no predecessor (null)
  CHECK(std::isnan(summarize({}, {}).mean_change_tv));
}

TEST_CASE("metrics.jsonl's counts read back at the width they were written with", "[summary]") {
  // 5e9 discarded samples: a 32-bit read would have wrapped it to 705,032,704.
  const auto rounds = read_metrics_file(
      write_metrics("wide", "{\"round\":1,\"time_end\":1.5,\"discarded_samples\":5000000000,\"late\":4294967296}\n"));
  REQUIRE(rounds.size() == 1);
  const auto s = summarize(rounds, {});
  CHECK(s.discarded_samples == 5000000000ULL);
  CHECK(s.late == 0);  // too wide for its 32-bit field: not read, rather than wrapped
  CHECK(rounds[0].time_end == 1.5);
  CHECK(std::isnan(s.mean_cohort_js));  // absent: undefined, not 0
}

TEST_CASE("summary.json's fields come from the one list, groups and privacy's included", "[summary]") {
  const auto s = summarize(read_metrics_file(write_metrics("json", eight_rounds())), {{0.5}, {450.0}});
  const auto j = summary_fields_json(s);
  CHECK(j["updates"]["aggregated"] == 32);
  CHECK(j["updates"]["late"] == 8);
  CHECK(j["discarded_samples"] == 80);
  CHECK(j["bytes"]["up"] == 800);
  CHECK(j["bytes"]["down"] == 0);
  CHECK(j["rounds_to_accuracy"]["0.5"] == 3);
  CHECK(j["accuracy_at_time"]["450.0"] == 0.5);
  CHECK(j["mean_cohort_js"] == Approx(0.2));
  CHECK_FALSE(j.contains("secure_aggregation"));  // no round ran the protocol
  CHECK_FALSE(j.contains("mean_update_drift"));   // never measured
  CHECK_FALSE(j.contains("epsilon"));             // the privacy object's, with its bound
  CHECK_FALSE(j.contains("diverged"));
}

TEST_CASE("summary: the first diverged aggregation and its reason", "[summary]") {
  const auto path = write_metrics("diverged",
                                  "{\"round\":1,\"time_end\":10,\"finished\":2,\"test_accuracy\":0.3,\"test_loss\":2}\n"
                                  "{\"round\":2,\"time_end\":20,\"failed\":2,\"divergence\":\"every update failed\","
                                  "\"test_accuracy\":0.1,\"test_loss\":null}\n");
  const auto s = summarize(read_metrics_file(path), {});
  REQUIRE(s.diverged_round == 2u);
  CHECK(s.divergence == "every update failed");
  CHECK(s.failed == 2);
}

TEST_CASE("metrics files: a last line cut short is skipped, a broken line elsewhere is an error", "[summary]") {
  const auto cut = write_metrics("cut", "{\"round\":1,\"time_end\":10}\n{\"round\":2,\"ti");
  CHECK(read_metrics_file(cut).size() == 1);
  const auto broken = write_metrics("broken", "{\"round\":1,\"time_end\":10}\nnot json\n{\"round\":3}\n");
  CHECK_THROWS_WITH(read_metrics_file(broken), Catch::Contains(":2: not a JSON object"));
  CHECK_THROWS_AS(read_metrics_file(fs::temp_directory_path() / "drift-no-such-run" / "metrics.jsonl"), UserError);
}
