#pragma once
// The files of one run. metrics.jsonl and clients.csv hold only results that are a function
// of (scenario, seed), so two runs can be compared byte for byte; anything measured in
// wall-clock time goes to timings.jsonl.
#include <filesystem>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

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

  const std::filesystem::path& path() const { return path_; }
  void append(const RoundReport& report);  // metrics.jsonl, clients.csv, timings.jsonl
  void write_summary(const RunSummary& summary, const std::string& status, double wall_seconds,
                     const std::string& reason = "");
  // participation.csv: per client, how often it was selected, aggregated, late, dropped, failed.
  void write_participation();

 private:
  void write_population(const Scenario& scenario, const Population& population);
  struct Counts {
    std::uint64_t selected = 0, aggregated = 0, late = 0, dropped = 0, failed = 0;
  };
  std::filesystem::path path_;
  std::vector<Counts> participation_;
  bool shadow_clients_ = false;  // metrics.jsonl carries update_drift
  std::ofstream metrics_, clients_, timings_;
};

}  // namespace drift
