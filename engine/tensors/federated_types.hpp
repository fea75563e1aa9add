#pragma once
// The values that travel between the parts of a federation, independent of how they travel
// (messages/ encodes them as Cap'n Proto; engine code only ever sees these structs).
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/core/named_tensors.hpp"
#include "engine/core/payload.hpp"

namespace drift {

struct HyperParams {
  double learning_rate = 0.05;
  double momentum = 0.0;
  double weight_decay = 0.0;
  std::uint32_t local_epochs = 1;
  std::uint32_t batch_size = 64;
  bool drop_last = false;
  double grad_clip = 0.0;  // clip the global gradient norm of every step to this; 0 = off
  double lr_decay = 1.0;  // learning rate of round r = learning_rate * lr_decay^(r - 1) (server side)
};

struct TrainingTask {
  std::uint32_t round = 0;
  std::uint64_t model_version = 0;
  NamedTensors weights;
  Payload payload;
  HyperParams hyper;
};

enum class UpdateKind { weights, delta };

struct TrainMetrics {
  double loss = 0.0;
  double accuracy = 0.0;
  std::uint32_t steps = 0;
  std::uint64_t samples_seen = 0;
};

struct EvalResult {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  double loss_sum = 0.0;
  std::vector<std::uint64_t> correct;  // per class
  std::vector<std::uint64_t> count;    // per class
};

struct ClientUpdate {
  std::uint32_t client_id = 0;
  std::uint32_t round = 0;
  std::uint64_t model_version = 0;
  std::uint64_t num_samples = 0;
  UpdateKind kind = UpdateKind::weights;
  NamedTensors weights;
  Payload payload;
  TrainMetrics metrics;
  // Private models: the client's model after training, on its own held-out test split.
  std::optional<EvalResult> personal;
};

struct EvalJob {
  std::uint64_t model_version = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

}  // namespace drift
