#pragma once
// The drivers' own values in a StateArchive (docs/checkpoints.md).
#include "engine/core/state_archive.hpp"
#include "engine/sim/driver.hpp"
#include "engine/sim/task_planner.hpp"

namespace drift {

void archive_plan(StateArchive& ar, TaskPlan& p);
void archive_outcome(StateArchive& ar, JobOutcome& o);

}  // namespace drift
