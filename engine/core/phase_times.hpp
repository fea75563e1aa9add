#pragma once
// Where a run's host time goes, phase by phase, when DRIFT_PHASE_TIMES=1 is set: each PhaseScope
// adds its wall time and CPU time (its own thread's) to its phase's totals, which the run prints
// at its end (docs/performance.md#phase-times). Without the variable a scope costs one branch, so
// the scopes stay in the code that GPU slots run, where a profiler is rarely at hand.
#include <cstdint>
#include <string>
#include <vector>

namespace drift {

struct PhaseTotal {
  std::string name;
  std::uint64_t count = 0;
  double wall_seconds = 0.0;
  double cpu_seconds = 0.0;  // the calling thread's CPU time inside the scopes
};

// Whether phases are timed: DRIFT_PHASE_TIMES=1 at the first call, or set_phase_times.
bool phase_times_enabled();
void set_phase_times(bool enabled);

// The totals so far, by name; and the table the run prints (empty when nothing was timed).
std::vector<PhaseTotal> phase_totals();
std::string phase_report();
void reset_phase_times();

// Times one phase from construction to destruction. `name` must outlive the process (a literal).
class PhaseScope {
 public:
  explicit PhaseScope(const char* name);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  const char* name_ = nullptr;  // null: not timing
  double wall_start_ = 0.0, cpu_start_ = 0.0;
};

}  // namespace drift
