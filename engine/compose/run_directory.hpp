#pragma once
// The files of one run. metrics.jsonl and clients.csv hold only results that are a function
// of (scenario, seed), so two runs can be compared byte for byte; anything measured in
// wall-clock time goes to timings.jsonl.
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "engine/compose/federation_data.hpp"
#include "engine/config/scenario.hpp"
#include "engine/core/directory_lock.hpp"
#include "engine/core/process_usage.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/core/stream_hash.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/metrics/summary.hpp"
#include "engine/privacy/run_epsilon.hpp"

namespace drift {

// Refuses (UserError, `what` naming the flag or key) an output path with a control character
// (a newline would split every line that prints it) or one too long for the file system.
void check_output_path(const std::string& path, const std::string& what);

// `requested` if given (must not exist or be empty), else <runs_dir>/<name>, <name>-2, ...
std::filesystem::path choose_run_directory(const Scenario& scenario, const std::string& requested);

class RunDirectory {
 public:
  // Creates the directory, takes its lock (`holder` says who) and writes scenario.toml and
  // partition.json. Throws UserError when another process holds the directory or has written
  // into it since it was chosen.
  RunDirectory(std::filesystem::path path, const Scenario& scenario, const FederationData& data,
               const std::string& holder = "drift run");

  // Reopens the run at `path` for `drift resume`, under the lock the caller took before it read
  // the checkpoint: the appended files are cut back to the lengths `marks` recorded at the
  // checkpoint (what was written after it is gone), the participation counts are restored, and
  // scenario.toml is rewritten (rounds may have grown).
  RunDirectory(std::filesystem::path path, const Scenario& scenario, const std::string& marks, DirectoryLock lock);

  const std::filesystem::path& path() const { return path_; }
  // What a checkpoint records of the files: how long each appended file is, and the counts.
  std::string marks();
  void append(const RoundReport& report);  // metrics.jsonl, clients.csv, timings.jsonl
  // `resume`: the command that continues an interrupted run; `workers_lost`: what this process
  // lost of its workers (WorkerLosses).
  void write_summary(const RunSummary& summary, RunStatus status, double wall_seconds, const std::string& reason = "",
                     const std::string& resume = "", const std::vector<std::string>& workers_lost = {});
  // participation.csv: per client, how often it was selected, aggregated, late, dropped, failed
  // (and, in a private run, its own epsilon from the aggregations it took part in).
  void write_participation();

 private:
  void write_population(const Scenario& scenario, const Population& population);
  void archive_marks(StateArchive& ar);
  struct Counts {
    std::uint64_t selected = 0, aggregated = 0, late = 0, dropped = 0, failed = 0;
  };
  std::filesystem::path path_;
  DirectoryLock lock_;  // held while this process may write here
  std::vector<Counts> participation_;
  bool shadow_clients_ = false;                         // metrics.jsonl carries update_drift
  std::shared_ptr<const privacy::RunEpsilon> privacy_;  // [privacy] runs: each client's own epsilon
  // An appended file: its stream, and the length and hash of what it holds, which a checkpoint
  // records as its mark.
  struct Appended {
    std::filesystem::path path;
    std::ofstream out{};
    StreamHash written{};
    void write(const std::string& text);  // flushed and checked
  };
  Appended metrics_{path_ / "metrics.jsonl"}, clients_{path_ / "clients.csv"}, timings_{path_ / "timings.jsonl"};
  std::array<Appended*, 3> appended();
  // The process's CPU time and faults at the last record, and those of every round so far (of
  // every process that ran this run: a resume sums what timings.jsonl kept).
  ProcessUsage usage_mark_ = ProcessUsage::now();
  std::chrono::steady_clock::time_point wall_mark_ = std::chrono::steady_clock::now();
  ProcessUsage rounds_usage_;
};

}  // namespace drift
