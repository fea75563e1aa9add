#include "engine/sim/sim_archive.hpp"

#include "engine/tensors/tensor_archive.hpp"

namespace drift {

void archive_plan(StateArchive& ar, TaskPlan& p) { archive_fields(ar, p); }

void archive_outcome(StateArchive& ar, JobOutcome& o) { archive_fields(ar, o); }

}  // namespace drift
