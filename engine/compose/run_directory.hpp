#pragma once
// The files of one run. metrics.jsonl and clients.csv hold only results that are a function
// of (scenario, seed), so two runs can be compared byte for byte; anything measured in
// wall-clock time goes to timings.jsonl.
#include <filesystem>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/metrics/summary.hpp"
#include "engine/config/scenario.hpp"
#include "engine/compose/federation_data.hpp"

namespace drift {

// `requested` if given (must not exist or be empty), else <runs_dir>/<name>, <name>-2, ...
std::filesystem::path choose_run_directory(const Scenario& scenario, const std::string& requested);

class RunDirectory {
 public:
  // Creates the directory and writes scenario.toml and partition.json.
  RunDirectory(std::filesystem::path path, const Scenario& scenario, const FederationData& data);

  // Reopens the run at `path` for `drift resume`: the appended files are cut back to the
  // lengths `marks` recorded at the checkpoint (what was written after it is gone), the
  // participation counts are restored, and scenario.toml is rewritten (rounds may have grown).
  RunDirectory(std::filesystem::path path, const Scenario& scenario, const std::string& marks);

  const std::filesystem::path& path() const { return path_; }
  // What a checkpoint records of the files: how long each appended file is, and the counts.
  std::string marks();
  void append(const RoundReport& report);  // metrics.jsonl, clients.csv, timings.jsonl
  // `resume`: the command that continues an interrupted run.
  void write_summary(const RunSummary& summary, const std::string& status, double wall_seconds,
                     const std::string& reason = "", const std::string& resume = "");
  // participation.csv: per client, how often it was selected, aggregated, late, dropped, failed.
  void write_participation();

 private:
  void write_population(const Scenario& scenario, const Population& population);
  void archive_marks(StateArchive& ar);
  struct Counts {
    std::uint64_t selected = 0, aggregated = 0, late = 0, dropped = 0, failed = 0;
  };
  std::filesystem::path path_;
  std::vector<Counts> participation_;
  bool shadow_clients_ = false;  // metrics.jsonl carries update_drift
  std::ofstream metrics_, clients_, timings_;
  std::uint64_t metrics_size_ = 0, clients_size_ = 0, timings_size_ = 0;  // bytes written
};

}  // namespace drift
