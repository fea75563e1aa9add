// drift compare: the study whose only factor is the algorithm variant; besides the study's
// tables it writes comparison.md and .csv, the table in the papers' conventions.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "engine/core/error.hpp"
#include "engine/core/input_file.hpp"
#include "engine/metrics/comparison.hpp"
#include "engine/metrics/metrics_file.hpp"
#include "engine/study/gnuplot.hpp"

namespace drift::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<double> kTargets = {0.5, 0.7, 0.8};

std::vector<std::string> domain_names(const fs::path& run) {
  const auto partition = json::parse(read_own_file(run / "partition.json").value_or(""), nullptr, false);
  return partition.is_object() && partition.contains("domains") ? partition["domains"].get<std::vector<std::string>>()
                                                                : std::vector<std::string>{};
}

// Communication and per-domain accuracy come from metrics.jsonl, which RoundFacts leaves out.
void add_metrics_columns(const fs::path& run, SeedResult& r) {
  if (!fs::exists(run / "metrics.jsonl")) return;  // the run never started
  const auto reports = read_metrics_reports(run / "metrics.jsonl");
  const std::size_t n = reports.size();
  double bytes = 0.0;
  std::vector<std::vector<double>> domain_rounds;
  for (const auto& m : reports) {
    bytes += static_cast<double>(m.bytes_up) + static_cast<double>(m.bytes_down);
    if (m.evaluated && !m.domain_accuracy.empty()) domain_rounds.push_back(m.domain_accuracy);
  }
  r.bytes_per_round = n ? bytes / static_cast<double>(n) : 0.0;
  if (domain_rounds.empty()) return;
  const auto first = domain_rounds.size() > 5 ? domain_rounds.size() - 5 : 0;
  r.domain_last5.assign(domain_rounds.back().size(), 0.0);
  for (std::size_t i = first; i < domain_rounds.size(); ++i)
    for (std::size_t d = 0; d < r.domain_last5.size() && d < domain_rounds[i].size(); ++d)
      r.domain_last5[d] += domain_rounds[i][d] / static_cast<double>(domain_rounds.size() - first);
}

SeedResult seed_result(const fs::path& out, const RunRecord& record) {
  SeedResult r;
  r.seed = record.seed;
  r.diverged = record.diverged();
  r.best_accuracy = record.summary.best_accuracy;
  r.last5_accuracy = record.summary.last5_mean_accuracy;
  for (const auto& [target, round] : record.summary.rounds_to)
    r.rounds_to.push_back(round ? std::optional<double>(*round) : std::nullopt);
  add_metrics_columns(out / record.path, r);
  return r;
}

}  // namespace

int compare_command(const StudyArgs& args) {
  if (args.algorithms.empty()) throw UserError("--algorithms: name at least one algorithm");
  if (!args.grid.empty()) throw UserError("drift compare takes no --grid; drift study does");
  auto with_targets = args;
  with_targets.sets.push_back("evaluation.targets=[0.5, 0.7, 0.8]");
  const auto plan = plan_study(with_targets, "compare-");
  const int status = execute_study(with_targets, plan);

  const auto table = study_table(plan);
  write_text_file(plan.out / "study.csv", study_csv(table));
  write_text_file(plan.out / "study.md", study_markdown(table));
  std::vector<ComparisonRow> rows;
  std::vector<std::string> domains;
  for (const auto& record : table.runs) {
    if (!record.finished()) continue;
    if (rows.empty() || rows.back().label != record.levels.at(0)) rows.push_back({record.levels.at(0), {}});
    rows.back().seeds.push_back(seed_result(plan.out, record));
    if (domains.empty()) domains = domain_names(plan.out / record.path);
  }
  write_text_file(plan.out / "comparison.md", comparison_markdown(rows, kTargets, domains));
  write_text_file(plan.out / "comparison.csv", comparison_csv(rows, kTargets, domains));
  std::cout << comparison_markdown(rows, kTargets, domains);
  if (!args.no_plots) plot_study_directory(plan.out, table);
  std::fprintf(stderr, "tables in %s/comparison.md, comparison.csv and study.csv\n", plan.out.c_str());
  return status;
}

}  // namespace drift::cli
