#pragma once
#include <caf/all.hpp>

#include <memory>

#include "engine/metrics/round_report.hpp"
#include "engine/metrics/run_directory.hpp"
#include "engine/metrics/summary.hpp"

namespace drift::actors {

// Hooks for whoever shows a run to a person (the CLI's progress line).
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_round(const RoundReport& report) {}
  virtual void on_finish(const RunSummary& summary) {}
};

// Writes every round report into the run directory and tells the observer; on finish,
// writes summary.json and replies with the summary's best accuracy.
caf::behavior metrics_sink(caf::event_based_actor* self, std::shared_ptr<RunDirectory> directory,
                           std::shared_ptr<RunObserver> observer, std::vector<double> targets);

}  // namespace drift::actors
