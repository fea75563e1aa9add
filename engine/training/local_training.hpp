#pragma once
// One client's local training task, free of actors: what a trainer slot runs.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/data/dataset.hpp"
#include "engine/metrics/evaluation.hpp"
#include "engine/models/model.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

// A job that failed on its own terms (non-finite loss, say): it fails that job, not the run.
class TrainingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "client 3 round 7: training loss became nan at local step 12", the message of a job whose
// loss stopped being finite.
std::string non_finite_loss_message(std::uint32_t client_id, std::uint32_t round, double value, std::int64_t step);

// Loads the task's weights into `model` (unless the task has none: private models), runs `local_epochs` of SGD over
// `indices` in an order drawn from ("batch-order", client, round, epoch), and returns the update. `state` is the
// client's private algorithm state, updated in place. `model` lives on `device`; the batches, the task's payload and
// the state follow it there, and the update comes back on the CPU. With `augment` enabled, every batch is augmented on
// the device from the ("augment", client, round, epoch, batch) stream before the algorithm sees it.
ClientUpdate train_locally(Model& model, ClientAlgorithm& algorithm, const Dataset& data,
                           const std::vector<std::int64_t>& indices, const TrainingTask& task, std::uint32_t client_id,
                           Payload& state, std::uint64_t seed, const torch::Device& device = torch::kCPU,
                           const AugmentConfig& augment = {});

// The start both trainers share: loads the task's weights into `model` (none: a private model
// keeps its own), puts it in training mode and begins the algorithm's client half on the
// context it returns, which refers to `task` and `state` (both already on `device`).
ClientContext begin_client(Model& model, ClientAlgorithm& algorithm, const Dataset& data,
                           const std::vector<std::int64_t>& indices, const TrainingTask& task, std::uint32_t client_id,
                           Payload& state, std::uint64_t seed, const torch::Device& device);

// A job's update without its weights: `steps` batches holding `seen` samples, whose losses
// (times their batch sizes) sum to `loss_sum` and whose predictions were right `correct` times.
ClientUpdate job_update(const TrainingTask& task, std::uint32_t client_id, std::uint64_t num_samples,
                        std::uint32_t steps, std::uint64_t seen, double loss_sum, std::int64_t correct);

// Evaluates `model` on test samples [begin, end) in batches; sums are in float64 and in
// sample order, so a range always gives the same bits.
EvalResult evaluate_range(Model& model, const Dataset& test, std::uint64_t begin, std::uint64_t end,
                          std::int64_t batch_size, const torch::Device& device = torch::kCPU, bool per_sample = false);

// Every tensor of the payload on `device` (the same tensors when they are there already).
Payload payload_on(const Payload& payload, const torch::Device& device);

// Where each domain's samples start in `test` (empty for a single-domain dataset).
std::vector<std::uint64_t> domain_starts(const Dataset& test);

}  // namespace drift
