#pragma once
// What becomes of a run's reports, apart from how they arrive: each aggregation judged for
// divergence, appended to the run directory and kept for the summary; at the end, summary.json
// and participation.csv. The metrics sink actor only hands reports and the end to this class.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/compose/run_directory.hpp"
#include "engine/compose/worker_losses.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/metrics/summary.hpp"

namespace drift {

struct RecorderOptions {
  SummaryTargets targets;
  std::vector<RoundFacts> earlier;                    // a resumed run: the aggregations reported before the checkpoint
  double wall_before = 0.0;                           // a resumed run: wall seconds spent before this process
  std::string resume_command;                         // written into summary.json when the run is interrupted
  std::shared_ptr<const WorkerLosses> worker_losses;  // listed in summary.json (null: none can be lost)
};

class RunRecorder {
 public:
  RunRecorder(std::shared_ptr<RunDirectory> directory, RecorderOptions options);

  // Fills the report's divergence when its evaluation diverged, and writes it. Throws
  // WriteError when it cannot be written.
  void record(RoundReport& report);

  // Writes summary.json (the run's status, the reason unless it completed, the resume command
  // when interrupted) and participation.csv; returns the summary. Throws WriteError.
  RunSummary finish(const RunEnd& end);

 private:
  std::shared_ptr<RunDirectory> directory_;
  RecorderOptions options_;
  std::vector<RoundFacts> rounds_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace drift
