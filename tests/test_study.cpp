// Studies: grid parsing, cells and their directories, the study table (with a diverged run),
// and the mean ± std bands of the study figures, against hand-computed values.
#include <nlohmann/json.hpp>
#include "catch_torch.hpp"

#include <cmath>

#include "engine/core/error.hpp"
#include "engine/study/grid.hpp"
#include "engine/study/html.hpp"
#include "engine/study/study_figures.hpp"
#include "engine/study/study_results.hpp"
#include "engine/study/summary_rows.hpp"

using namespace drift;

TEST_CASE("grid: values split at top-level commas only, so TOML lists and strings stay whole", "[study]") {
  CHECK(split_top_level("a,b", "x") == std::vector<std::string>{"a", "b"});
  CHECK(split_top_level("[0.3,0.4],[0.5]", "x") == std::vector<std::string>{"[0.3,0.4]", "[0.5]"});
  CHECK(split_top_level("\"a,b\",'c,d',{x=1,y=2}", "x") == std::vector<std::string>{"\"a,b\"", "'c,d'", "{x=1,y=2}"});
  CHECK(split_top_level("fedavg,fedskc+evaluation.targets=[0.3,0.4]", "x") ==
        std::vector<std::string>{"fedavg", "fedskc+evaluation.targets=[0.3,0.4]"});
  CHECK_THROWS_WITH(split_top_level("a,,b", "--grid k"), Catch::Contains("--grid k: empty item"));
  CHECK_THROWS_WITH(split_top_level("[1,2", "--grid k"), Catch::Contains("unbalanced"));
  const auto f = grid_factor("sampler.name=uniform,\"stratified\"");
  CHECK(f.name == "sampler.name");
  REQUIRE(f.levels.size() == 2);
  CHECK(f.levels[1].label == "stratified");  // shown without its TOML quotes
  CHECK(f.levels[1].sets == std::vector<std::string>{"sampler.name=\"stratified\""});
  CHECK_THROWS_AS(grid_factor("seed=1,2"), UserError);
  CHECK_THROWS_AS(grid_factor("sampler.name"), UserError);
}

TEST_CASE("grid: the Cartesian product, first factor slowest, and one directory per cell", "[study]") {
  const std::vector<Factor> factors = {algorithm_factor({"fedavg", "fedskc:reference+gpr=false"}),
                                       grid_factor("availability.model=always,diurnal")};
  const auto cells = grid_cells(factors);
  REQUIRE(cells.size() == 4);
  CHECK(cells[1].level == std::vector<std::size_t>{0, 1});
  CHECK(cells[2].level == std::vector<std::size_t>{1, 0});
  CHECK(cell_sets(factors, cells[3]) == std::vector<std::string>{"algorithm.name=fedskc", "algorithm.preset=reference",
                                                                 "algorithm.gpr=false", "availability.model=diurnal"});
  CHECK(cell_directory(factors, cells[3]) == "algorithm=fedskc_reference_gpr=false+availability.model=diurnal");
  CHECK(cell_label(factors, cells[3]) == "algorithm=fedskc:reference+gpr=false, availability.model=diurnal");
  // Algorithms alone: directories named as drift compare always named them.
  CHECK(cell_directory({factors[0]}, Cell{{1}}) == "fedskc_reference_gpr_false");
}

namespace {

RunRecord record(const std::string& level, std::uint64_t seed, double best, bool diverged) {
  RunRecord r;
  r.levels = {level};
  r.seed = seed;
  r.path = level + "/seed-" + std::to_string(seed);
  r.status = diverged ? "diverged" : "completed";
  r.summary.rounds = 10;
  r.summary.virtual_time = 7200;
  r.summary.best_accuracy = best;
  r.summary.final_accuracy = best;
  r.summary.last5_mean_accuracy = best;
  r.summary.rounds_to = {{0.5, std::nullopt}};
  r.summary.time_to = {{0.5, best >= 0.5 ? std::optional<double>(3600) : std::nullopt}};
  if (diverged) r.summary.diverged_round = 3;
  return r;
}

}  // namespace

TEST_CASE("study table: mean ± std over seeds, diverged runs counted, never averaged", "[study]") {
  StudyTable t{{grid_factor("training.lr=0.05,1e30")}, {{0.5}, {}}, {}};
  t.runs = {record("0.05", 1, 0.6, false), record("0.05", 2, 0.8, false), record("1e30", 1, 0.1, true),
            record("1e30", 2, 0.4, false)};
  const auto md = study_markdown(t);
  // 0.6, 0.8: mean 0.7, sample std 0.1414; the time to 50 % in hours.
  CHECK_THAT(md, Catch::Contains("| 0.05 | 2 | 2.00 ± 0.00 | 0.7000 ± 0.1414 |"));
  CHECK_THAT(md, Catch::Contains("| 1.00 ± 0.00 |"));
  CHECK_THAT(md, Catch::Contains("| 1e30 | 2 | 2.00 ± 0.00 | 0.4000, diverged 1/2 |"));
  const auto csv = study_csv(t);
  CHECK_THAT(csv, Catch::StartsWith("training.lr,seed,path,status,diverged_at,rounds,virtual_hours,best_accuracy,"));
  CHECK_THAT(csv, Catch::Contains("\n1e30,1,1e30/seed-1,diverged,3,10,2.0000,,,,,"));
  CHECK_THAT(csv, Catch::Contains("\n0.05,2,0.05/seed-2,completed,,10,2.0000,0.800000,0.800000,0.800000,,1.0000,"));
}

TEST_CASE("study figures: bands by round and by virtual time over the seeds that have a value", "[study]") {
  auto eval = [](std::uint32_t round, double t, double acc) {
    RoundFacts f;
    f.round = round;
    f.time_end = t;
    f.evaluated = true;
    f.accuracy = acc;
    return f;
  };
  const std::vector<std::vector<RoundFacts>> runs = {{eval(1, 10, 0.2), eval(2, 20, 0.4)},
                                                     {eval(1, 15, 0.4), eval(2, 30, 0.6)}};
  const auto by_round = band_by_round(runs);
  CHECK(by_round.x == std::vector<double>{1, 2});
  CHECK(by_round.mean[0] == Approx(0.3));
  CHECK(by_round.std[1] == Approx(std::sqrt(0.02)));
  const auto by_time = band_by_time(runs, {5, 12, 20, 100});
  CHECK(std::isnan(by_time.mean[0]));     // nobody evaluated by 5 s
  CHECK(by_time.mean[1] == Approx(0.2));  // only the first run by 12 s
  CHECK(by_time.mean[2] == Approx(0.4));  // 0.4 and 0.4
  CHECK(by_time.mean[3] == Approx(0.5));  // both finished: their final accuracies
  CHECK(by_time.x.back() == 30);          // the line ends where the cell's longest run ends
}

TEST_CASE("a legend names a cell by the factors that differ between cells", "[study]") {
  StudyTable t{{algorithm_factor({"fedau", "mifa"}), grid_factor("availability.model=cyclic")}, {{0.5}, {}}, {}};
  RunRecord a, b;
  a.levels = {"fedau", "cyclic"};
  b.levels = {"mifa", "cyclic"};
  t.runs = {a, b};
  CHECK(legend_label(t, a.levels) == "algorithm=fedau");
  t.runs = {a};  // one cell: nothing differs, so every factor names it
  CHECK(legend_label(t, a.levels) == "algorithm=fedau, availability.model=cyclic");
}

TEST_CASE("study.md gives virtual times in the unit of the study's span, study.csv in hours", "[study]") {
  StudyTable t{{grid_factor("training.lr=0.05")}, {{0.5}, {}}, {}};
  t.runs = {record("0.05", 1, 0.6, false), record("0.05", 2, 0.8, false)};
  for (auto& r : t.runs) {
    r.summary.virtual_time = 90;  // a minute and a half
    r.summary.time_to = {{0.5, 45.0}};
  }
  const auto md = study_markdown(t);
  CHECK_THAT(md, Catch::Contains("virtual_seconds"));
  CHECK_THAT(md, Catch::Contains("seconds_to_50"));
  CHECK_THAT(md, Catch::Contains("| 90.0 ± 0.0 |"));
  CHECK_THAT(md, Catch::Contains("| 45.0 ± 0.0 |"));
  CHECK_THAT(study_csv(t), Catch::Contains(",0.0250,"));  // 90 s in hours
}

TEST_CASE("a run page's summary reads as a person would write it", "[study]") {
  const auto summary =
      nlohmann::json::parse(R"({"status": "completed", "rounds": 30, "virtual_time": 19.616368563269525,
    "last5_mean_accuracy": 0.21739999999999998, "rounds_to_accuracy": {"0.5": null, "0.7": 12},
    "time_to_accuracy": {"0.5": 7230.0}, "accuracy_at_time": {"3600": 0.5}, "mean_cohort_tv": null,
    "updates": {"aggregated": 240, "dropped": 3}, "wall_seconds": 312.4,
    "privacy": {"epsilon": 6.4609, "delta": 0.001, "bound": "amplified"},
    "secure_aggregation": {"rounds": 30, "aborted": 2, "seconds": 40.5, "extra_seconds": 31.0, "overflow_count": 0}})");
  const auto rows = readable_summary(summary);
  const std::vector<std::pair<std::string, std::string>> expected{
      {"status", "completed"},
      {"rounds", "30"},
      {"virtual time", "19.6 s"},
      {"mean of the last 5 evaluations", "21.7 %"},
      {"first round at accuracy", "50 %: not reached; 70 %: round 12"},
      {"virtual time to accuracy", "50 %: 2.0 h"},
      {"accuracy after virtual time", "60.0 min: 50.0 %"},
      {"mean cohort drift (TV)", "undefined"},
      {"updates", "240 aggregated, 3 dropped"},
      {"privacy", "epsilon 6.46 at delta 0.001 (amplified)"},
      {"secure aggregation",
       "30 rounds, 2 aborted; 40.5 s of protocol, 31.0 s beyond plain uploads; 0 elements wrapped"},
      {"wall time", "5.2 min"}};
  CHECK(rows == expected);
  CHECK(readable_summary(nlohmann::json::parse(R"({"accuracy_at_time": {}})")).empty());  // no budgets: no row
}

TEST_CASE("a live page reloads itself and says how far it is, and a still page does neither", "[study]") {
  HtmlPage page;
  page.title = "drift run runs/x";
  page.figures = {{"accuracy", "Test accuracy", "", 800, 450}};
  page.figures_prefix = "live-figures-2";
  const auto final_html = render_html(page);
  CHECK(final_html.find("http-equiv") == std::string::npos);
  CHECK(final_html.find("class=\"live\"") == std::string::npos);

  page.live_text = "Running: aggregation 3 of 30 (10 %) <now>";
  page.refresh_seconds = 15;
  const auto live = render_html(page);
  CHECK(live.find("<meta http-equiv=\"refresh\" content=\"15\">\n") != std::string::npos);
  CHECK(live.find("<p class=\"live\" id=\"live\">Running: aggregation 3 of 30 (10 %) &lt;now&gt;</p>") !=
        std::string::npos);
  CHECK(live.find("src=\"live-figures-2/accuracy.png\"") != std::string::npos);

  const auto still = still_page(live, "Interrupted; drift resume runs/x continues the run.");
  CHECK(still.find("http-equiv") == std::string::npos);
  CHECK(still.find("<p class=\"live\" id=\"live\">Interrupted; drift resume runs/x continues the run.</p>") !=
        std::string::npos);
  CHECK(still.find("src=\"live-figures-2/accuracy.png\"") != std::string::npos);  // its figures stay
  CHECK(still_page(final_html, "anything") == final_html);                        // nothing live: unchanged
}
