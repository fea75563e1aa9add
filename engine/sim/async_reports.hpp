#pragma once
// How the asynchronous driver hands its aggregation reports to the listener. An aggregation
// that is not due for evaluation waits until the next one, or until the run ends, so the
// run's last aggregation is always evaluated, whatever ends the run: the rounds, a virtual-time
// limit the next event would pass, nobody left to train, or divergence.
#include <optional>

#include "engine/config/scenario.hpp"
#include "engine/sim/driver.hpp"
#include "engine/sim/personal_evaluations.hpp"

namespace drift {

class AsyncReports {
 public:
  // `personal` is null unless clients keep private models.
  AsyncReports(const Scenario& scenario, DriverListener& listener, const PersonalEvaluations* personal)
      : scenario_(scenario), listener_(listener), personal_(personal) {}

  // Aggregation `report.round` happened; `global` is the model after it (null for private
  // models); `last` when nothing follows it.
  void aggregated(RoundReport report, const NamedTensors* global, bool last);
  // The run is over: the held report, if any, goes out evaluated, then the end.
  void finish(const RunEnd& end, const NamedTensors* global);
  // An aggregation waits to learn whether it is the last.
  bool holding() const { return held_.has_value(); }

 private:
  void emit(RoundReport report, bool evaluate, const NamedTensors* global);

  const Scenario& scenario_;
  DriverListener& listener_;
  const PersonalEvaluations* personal_;
  std::optional<RoundReport> held_;  // the last aggregation, when it was not due for evaluation
};

}  // namespace drift
