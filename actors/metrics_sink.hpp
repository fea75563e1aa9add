#pragma once
#include <caf/fwd.hpp>

#include <memory>
#include <string>
#include <vector>

#include "engine/compose/run_recorder.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/metrics/summary.hpp"

namespace drift::actors {

// Hooks for whoever shows a run to a person (the CLI's progress line).
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_round(const RoundReport& report) {}
  virtual void on_finish(const RunSummary& summary) {}
  virtual void on_notice(const std::string& text) {}   // e.g. a worker joined (any actor's thread)
  virtual void on_warning(const std::string& text) {}  // e.g. a worker was lost
  // Within round `round`: `arrived` of `needed` updates are in (the server's thread).
  virtual void on_progress(std::uint32_t round, std::uint32_t arrived, std::uint32_t needed) {}
  virtual void on_checkpoint(const std::string& text) {}  // a checkpoint was written, and its cost
};

using SinkOptions = RecorderOptions;

// Records every round report (RunRecorder) and tells the observer; on finish, writes
// summary.json with the driver's status (completed; ended or diverged with the reason) and
// replies with the summary's best accuracy. On stop (a run that cannot go on),
// writes summary.json with status "stopped" and the reason, so that the run directory stays
// complete up to the last reported round.
caf::behavior metrics_sink(caf::event_based_actor* self, std::shared_ptr<RunDirectory> directory,
                           std::shared_ptr<RunObserver> observer, SinkOptions options);

}  // namespace drift::actors
