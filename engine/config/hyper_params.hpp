#pragma once
// Local training's hyper-parameters, as the scenario's [training] section gives them and as a
// training task carries them to a client.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/config/choices.hpp"

namespace drift {

struct HyperParams {
  double learning_rate = 0.05;
  double momentum = 0.0;
  double weight_decay = 0.0;
  std::uint32_t local_epochs = 1;
  // > 0: this many mini-batch steps a round instead of local_epochs passes (FedAU's protocol);
  // docs/scenarios.md#local-steps says how the batches are cut.
  std::uint32_t local_steps = 0;
  // Under local_steps: whether a client's shuffled pass runs on across its jobs (its place is
  // kept in its state, engine/training/batch_schedule.hpp).
  StepsPass steps_pass = StepsPass::fresh;
  std::uint32_t batch_size = 64;
  // simulation.partial_work: > 0 stops this client's training after this many of its steps
  // (a straggler sends what it managed by the deadline); 0: the whole local work. A task carries
  // it in 16 bits, so a cut is at most kMaxStepCut steps.
  std::uint32_t max_steps = 0;
  bool drop_last = false;
  double grad_clip = 0.0;  // clip the global gradient norm of every step to this; 0 = off
  double lr_decay = 1.0;   // exponential: learning rate of round r = learning_rate * lr_decay^(r - 1)
  LrSchedule lr_schedule = LrSchedule::exponential;  // computed on the server side, per round
};

// Whether a client's pass runs on across its jobs: local_steps with steps_pass = persistent.
inline bool persistent_pass(const HyperParams& h) { return h.local_steps > 0 && h.steps_pass == StepsPass::persistent; }

// How many samples one round of local training goes through for a client holding n: its passes,
// or under local_steps that many batches of min(batch_size, n) (the virtual time's compute).
inline double local_samples_per_round(const HyperParams& h, std::uint64_t n) {
  if (h.local_steps > 0)
    return static_cast<double>(h.local_steps) * static_cast<double>(std::min<std::uint64_t>(h.batch_size, n));
  return static_cast<double>(n) * static_cast<double>(h.local_epochs);
}

inline constexpr std::uint32_t kMaxStepCut = 65535;

// The mini-batch steps of one round of local training for a client holding n samples: its
// passes cut into batches (the last one short unless drop_last), or local_steps.
// The batches of one pass over n samples (the last one short unless drop_last).
inline std::uint64_t steps_per_epoch(const HyperParams& h, std::uint64_t n) {
  return h.drop_last ? n / h.batch_size : (n + h.batch_size - 1) / h.batch_size;
}

inline std::uint64_t steps_per_round(const HyperParams& h, std::uint64_t n) {
  if (h.local_steps > 0) return n == 0 ? 0 : h.local_steps;
  return steps_per_epoch(h, n) * h.local_epochs;
}

// The samples the first k steps of a round go through (the virtual time's compute of partial
// work); k = steps_per_round gives local_samples_per_round, drop_last aside.
inline double samples_in_steps(const HyperParams& h, std::uint64_t n, std::uint64_t k) {
  if (h.local_steps > 0) return static_cast<double>(k) * static_cast<double>(std::min<std::uint64_t>(h.batch_size, n));
  const std::uint64_t per_epoch = steps_per_epoch(h, n);
  if (per_epoch == 0) return 0.0;
  const std::uint64_t epoch_samples = h.drop_last ? per_epoch * h.batch_size : n;
  // Within an epoch every step but the last is a full batch.
  return static_cast<double>((k / per_epoch) * epoch_samples + (k % per_epoch) * h.batch_size);
}

// The most steps whose samples fit in `budget` (at most the round's steps).
inline std::uint64_t steps_within(const HyperParams& h, std::uint64_t n, double budget) {
  std::uint64_t lo = 0, hi = steps_per_round(h, n);
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    if (samples_in_steps(h, n, mid) <= budget)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// The local learning rate of round (or asynchronous aggregation) r >= 1 under the schedule.
inline double learning_rate_of_round(const HyperParams& h, std::uint32_t round) {
  const double t = round > 0 ? static_cast<double>(round - 1) : 0.0;
  switch (h.lr_schedule) {
    case LrSchedule::inverse:
      return h.learning_rate / (t + 1.0);
    case LrSchedule::inverse_sqrt:
      return h.learning_rate / std::sqrt(t / 10.0 + 1.0);
    case LrSchedule::exponential:
      break;
  }
  return h.learning_rate * std::pow(h.lr_decay, t);
}

}  // namespace drift
