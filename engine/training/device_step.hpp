#pragma once
// One local SGD step on a device, written so that the host never waits for the device and the
// device never waits for the host: the learning rate, the job's sums and the step counter are
// device tensors, the gradients and momentum buffers stay where they are from job to job, and
// no value is read back. A step is therefore the same kernels on the same addresses at every
// call, which is what a CUDA graph captures (device_trainer.hpp).
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <tuple>
#include <vector>

#include "engine/models/model.hpp"

namespace drift {

// What a step does besides its batch; a captured step is valid for one setting of these.
struct StepSettings {
  std::int64_t batch = 0;  // the batch's size
  double momentum = 0.0;
  double weight_decay = 0.0;
  double grad_clip = 0.0;
  double proximal_mu = 0.0;  // > 0: FedProx's term, toward the weights the job started from
  auto key() const { return std::make_tuple(batch, momentum, weight_decay, grad_clip, proximal_mu); }
  bool operator<(const StepSettings& o) const { return key() < o.key(); }
};

// A job's sums as they come back to the host.
struct StepTotals {
  double loss = 0.0;            // sum of loss x batch size, in float64
  std::int64_t correct = 0;     // training predictions that were right
  std::int64_t first_bad = -1;  // the first step whose loss was not finite; -1: none
  double bad_value = 0.0;       // that loss
};

// `weights`: undefined, or one float per row of a padded batch, 1 for a sample and 0 for padding
// (a loss that takes padded batches weighs its rows by them; docs/performance.md#cuda-graphs).
using StepLoss =
    std::function<torch::Tensor(const torch::Tensor& labels, const ModelOutput& out, const torch::Tensor& weights)>;

class StepState {
 public:
  // Gradients, momentum buffers and sums for `model`'s trainable parameters, on `device`.
  StepState(Model& model, const torch::Device& device);

  // Starts a job: momentum and sums to zero, the learning rate set, FedProx's anchor taken
  // from the model's current weights. `extra` are further tensors the job trains (an
  // algorithm's extra_parameters()), with momentum buffers of their own for this job.
  void begin_job(double learning_rate, bool anchor, std::vector<torch::Tensor> extra = {});

  // Forward, loss, backward, SGD (clipping, weight decay, momentum, learning rate as
  // torch::optim::SGD orders them) and the sums, for one batch. `weights` (defined for a padded
  // batch) marks its samples: the loss and the sums count only them.
  void step(const torch::Tensor& x, const torch::Tensor& y, const StepLoss& loss, const StepSettings& settings,
            const torch::Tensor& weights = {});

  // The loss of the objective a graph can capture: mean cross-entropy over the batch's samples
  // (the rows `weights` marks, when defined), plus FedProx's term toward the job's anchor when
  // `proximal_mu` > 0.
  torch::Tensor objective_loss(const torch::Tensor& labels, const ModelOutput& out, double proximal_mu,
                               const torch::Tensor& weights = {}) const;

  // The sums as device tensors (loss, correct, first bad step, its loss), to download with the
  // weights in one wait; totals_of reads them once they are on the CPU.
  std::vector<torch::Tensor> sums() const { return {loss_sum_, correct_, first_bad_, bad_value_}; }
  static StepTotals totals_of(const std::vector<torch::Tensor>& host_sums);

 private:
  void zero_grads();
  void apply_sgd(const StepSettings& s);
  void record(const torch::Tensor& loss, const torch::Tensor& logits, const torch::Tensor& y, std::int64_t batch,
              const torch::Tensor& weights);

  Model& model_;
  std::vector<torch::Tensor> params_, momenta_, anchors_;  // the model's trainable parameters
  std::vector<torch::Tensor> extra_, extra_momenta_;       // this job's extra parameters
  torch::Tensor neg_lr_;                                   // -learning rate, float32
  torch::Tensor loss_sum_, correct_, first_bad_, bad_value_, step_;
};

}  // namespace drift
