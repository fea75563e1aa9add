#include "engine/compose/run_recorder.hpp"

#include "engine/sim/divergence.hpp"

namespace drift {

RunRecorder::RunRecorder(std::shared_ptr<RunDirectory> directory, RecorderOptions options)
    : directory_(std::move(directory)), options_(std::move(options)), rounds_(std::move(options_.earlier)) {}

void RunRecorder::record(RoundReport& report) {
  if (report.divergence.empty()) report.divergence = evaluation_divergence(report);
  directory_->append(report);
  rounds_.push_back(facts_of(report));
}

RunSummary RunRecorder::finish(const RunEnd& end) {
  const auto summary = summarize(rounds_, options_.targets);
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - started_;
  const bool interrupted = end.status == RunStatus::interrupted;
  directory_->write_summary(summary, end.status, options_.wall_before + wall.count(), end.reason,
                            interrupted ? options_.resume_command : "",
                            options_.worker_losses ? options_.worker_losses->list() : std::vector<std::string>{});
  directory_->write_participation();
  return summary;
}

}  // namespace drift
