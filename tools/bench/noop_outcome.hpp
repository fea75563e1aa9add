#pragma once
// The benchmarks' stand-in for training: the update is the received model itself (its tensors
// are shared, not copied), from 100 samples.
#include <cstdint>

#include "engine/sim/driver.hpp"

namespace drift::bench {

inline JobOutcome noop_outcome(std::uint32_t client, const TrainingTask& task, std::uint64_t upload_bytes) {
  JobOutcome o;
  o.ok = true;
  o.upload_bytes = upload_bytes;
  o.update.client_id = client;
  o.update.model_version = task.model_version;
  o.update.num_samples = 100;
  o.update.weights = task.weights;
  return o;
}

}  // namespace drift::bench
