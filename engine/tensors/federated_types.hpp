#pragma once
// The values that travel between the parts of a federation, independent of how they travel
// (messages/ encodes them as Cap'n Proto; engine code only ever sees these structs).
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/config/hyper_params.hpp"
#include "engine/metrics/evaluation.hpp"
#include "engine/tensors/named_tensors.hpp"
#include "engine/tensors/payload.hpp"

namespace drift {

struct TrainingTask {
  std::uint32_t round = 0;
  std::uint64_t model_version = 0;
  NamedTensors weights;
  Payload payload;
  HyperParams hyper;
};

struct TrainMetrics {
  double loss = 0.0;
  double accuracy = 0.0;
  std::uint32_t steps = 0;
  std::uint64_t samples_seen = 0;
};

struct ClientUpdate {
  std::uint32_t client_id = 0;
  std::uint32_t round = 0;
  std::uint64_t model_version = 0;
  std::uint64_t num_samples = 0;
  NamedTensors weights;
  Payload payload;
  TrainMetrics metrics;
  // Private models: the client's model after training, on its own held-out test split.
  std::optional<EvalResult> personal;
};

// Each client's coefficient in one aggregation's step, as (client id, coefficient) ascending by
// id: ServerAlgorithm::shares, and the participation bias computed from it.
using ClientShares = std::vector<std::pair<std::uint32_t, double>>;

struct EvalJob {
  std::uint64_t model_version = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  bool per_sample = false;  // also return each sample's hit (evaluation.per_client)
};

}  // namespace drift
