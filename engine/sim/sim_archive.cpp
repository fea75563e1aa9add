#include "engine/sim/sim_archive.hpp"

#include "engine/tensors/tensor_archive.hpp"

namespace drift {

void archive_plan(StateArchive& ar, TaskPlan& p) {
  p.each_field([&ar](auto&... field) { (ar.value(field), ...); });
}

void archive_outcome(StateArchive& ar, JobOutcome& o) {
  ar.value(o.ok);
  ar.text(o.error);
  ar.value(o.lost);
  ar.value(o.upload_bytes);
  archive_update(ar, o.update);
}

}  // namespace drift
