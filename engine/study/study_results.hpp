#pragma once
// A study's results, rebuilt from its run directories alone: one record per run (summary.json
// for how it ended, metrics.jsonl for every number, so targets and budgets can change without
// running again), study.csv with one row per run, and study.md with tables grouped by factor.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/metrics/summary.hpp"
#include "engine/study/grid.hpp"

namespace drift {

struct RunRecord {
  std::vector<std::string> levels;  // per factor, the level's label
  std::uint64_t seed = 0;
  std::string path;  // relative to the study directory
  // summary.json's, or "missing" (never ran) / "unfinished" (no summary) / "damaged" (its files
  // disagree since it finished: `damage` says how; not counted)
  std::string status;
  std::string damage;
  RunSummary summary;
  double wall_seconds = 0.0;
  bool diverged() const {
    return run_status_named(status) == RunStatus::diverged || summary.diverged_round.has_value();
  }
  bool finished() const { return run_is_over(run_status_named(status)); }
};

// Reads one run directory; a run that has not finished yet reads as missing or unfinished.
RunRecord read_run_record(const std::filesystem::path& study_dir, const std::string& relative_path,
                          const SummaryTargets& targets);

struct StudyTable {
  std::vector<Factor> factors;
  SummaryTargets targets;
  std::vector<RunRecord> runs;  // in cell order, seeds within
};

// Where the run of `cell` and `seed` lives, under the study directory: <cell>/seed-<N>.
std::string study_run_path(const std::vector<Factor>& factors, const Cell& cell, std::uint64_t seed);

// Every run of the grid (cells in order, seeds within), read from its directory.
StudyTable read_study_table(const std::filesystem::path& study_dir, std::vector<Factor> factors,
                            const std::vector<std::uint64_t>& seeds, SummaryTargets targets);

// How a figure's legend names the cell of `levels`: by the factors whose level differs between
// the table's cells, since a factor held at one level tells the cells nothing apart and its
// long name would squeeze the plot; by every factor when none differs.
std::string legend_label(const StudyTable& table, const std::vector<std::string>& levels);

// One row per run: every factor, seed, path, status and result. Diverged runs have their status
// and the aggregation where they diverged, and no accuracy.
std::string study_csv(const StudyTable& table);
// Mean ± sample std over seeds per cell, then per level of each factor (over everything else);
// diverged runs are counted, never averaged.
std::string study_markdown(const StudyTable& table);

}  // namespace drift
