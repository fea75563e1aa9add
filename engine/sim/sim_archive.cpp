#include "engine/sim/sim_archive.hpp"

#include "engine/tensors/tensor_archive.hpp"

namespace drift {

void archive_plan(StateArchive& ar, TaskPlan& p) {
  ar.value(p.job);
  ar.value(p.client);
  ar.value(p.start);
  ar.value(p.download_end);
  ar.value(p.compute_end);
  ar.value(p.earliest_finish);
  ar.value(p.drop_time);
  ar.value(p.up_bandwidth);
  ar.value(p.down_bytes);
  ar.value(p.model_version);
}

void archive_outcome(StateArchive& ar, JobOutcome& o) {
  ar.value(o.ok);
  ar.text(o.error);
  ar.value(o.lost);
  ar.value(o.upload_bytes);
  archive_update(ar, o.update);
}

}  // namespace drift
