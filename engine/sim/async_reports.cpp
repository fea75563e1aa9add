#include "engine/sim/async_reports.hpp"

#include "engine/sim/round_rules.hpp"

namespace drift {

void AsyncReports::aggregated(RoundReport report, const NamedTensors* global, bool last) {
  if (held_) {
    // A newer aggregation exists: the held one keeps its schedule (not evaluated); its model
    // is gone anyway.
    emit(std::move(*held_), false, nullptr);
    held_.reset();
  }
  if (last || evaluation_due(scenario_, report.round, false)) return emit(std::move(report), true, global);
  held_ = std::move(report);
}

void AsyncReports::finish(const RunEnd& end, const NamedTensors* global) {
  // No aggregation followed the held one, so `global` is still its model.
  if (held_) emit(std::move(*held_), true, global);
  held_.reset();
  listener_.on_finished(end);
}

void AsyncReports::emit(RoundReport report, bool evaluate, const NamedTensors* global) {
  if (personal_ != nullptr) {
    if (evaluate) personal_->report(report);
    listener_.on_aggregation(std::move(report), nullptr);
  } else {
    listener_.on_aggregation(std::move(report), evaluate ? global : nullptr);
  }
}

}  // namespace drift
