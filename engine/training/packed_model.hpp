#pragma once
// K clients of one architecture held as one module, so that one kernel launch trains them all
// (docs/performance.md#packed-clients). Every parameter is stacked along a new first dimension,
// one row per client: convolutions run grouped over the clients' stacked channels, linear
// layers as batched matmuls, BatchNorm over K x C channels (so each client normalises with its
// own statistics and keeps its own running ones). The clients never mix: the loss is the sum
// of each client's own loss, so each row receives exactly its client's gradient, and the SGD
// step (momentum, weight decay, gradient clipping) is applied row by row.
//
// Any subset of the pack can step: rows are gathered, trained and scattered back, which is
// how clients whose batch is shorter, or whose data has ended, stay out of a step.
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/models/model.hpp"
#include "engine/tensors/named_tensors.hpp"

namespace drift {

// Why `model` cannot be packed (empty when it can): the two-convolution CNNs and the ResNets
// with the plain linear head pack; other architectures, heads and text models do not.
std::string packing_refusal(const Model& model);
// The same from a model's name and the options an algorithm asks for, before any model exists.
std::string packing_refusal(const std::string& model_name, const ModelOptions& options);

// Whether the model normalizes by batch statistics (BatchNorm keeps running means), which the
// padding rows of a padded batch would enter.
bool has_batch_statistics(const torch::nn::Module& model);

// The SGD hyper-parameters a packed step applies to every row, as torch::optim::SGD does.
struct PackedSgd {
  double learning_rate = 0.01, momentum = 0.0, weight_decay = 0.0;
  double grad_clip = 0.0;    // > 0: each client's global gradient norm is clipped to this
  double proximal_mu = 0.0;  // > 0: FedProx's (mu/2)||w - w_start||^2, each row to its own start
};

class PackedModel {
 public:
  // `clients` rows, each starting from `start` (the weights of `prototype`'s architecture), on
  // `device`. Throws std::invalid_argument when the architecture does not pack.
  PackedModel(const Model& prototype, const NamedTensors& start, std::int64_t clients, const torch::Device& device);

  std::int64_t size() const { return clients_; }

  // One SGD step of the rows `rows` (ascending indices into the pack) on x [B, S*C, H, W]
  // (row r's images in channel block r) and labels y [S, B]. Returns each row's loss [S]
  // (cross-entropy, plus the proximal term when set) and its correct predictions [S], on the
  // device and without a host synchronisation.
  std::pair<torch::Tensor, torch::Tensor> step(const std::vector<std::int64_t>& rows, const torch::Tensor& x,
                                               const torch::Tensor& y, const PackedSgd& sgd);
  // The same with `rows` also given as an int64 tensor on the pack's device, so that the step
  // copies nothing from the host.
  std::pair<torch::Tensor, torch::Tensor> step(const std::vector<std::int64_t>& rows, const torch::Tensor& index,
                                               const torch::Tensor& x, const torch::Tensor& y, const PackedSgd& sgd);

  // One step of every row at once, one shape whatever the members' batches: x [P, K*C, H, W]
  // and y [K, P] hold P rows per client, of which the first sizes[r] (an int64 tensor [K] on the
  // device) are row r's samples and the rest padding that weighs nothing. Row r's loss is its
  // samples' summed cross-entropy over sizes[r] (plus the proximal term), as train_locally's
  // mean; a row of size 0 takes no step and its weights and momentum stay as they are, to the
  // bit. The learning rate is set_learning_rate's (a device tensor), not sgd's, and the host
  // does nothing per call, so a CUDA graph of the call serves every round. Returns each row's
  // loss and its samples' correct predictions [K]. Refused (std::logic_error) for models with
  // batch statistics, which the padding would enter.
  std::pair<torch::Tensor, torch::Tensor> step_padded(const torch::Tensor& x, const torch::Tensor& y,
                                                      const torch::Tensor& sizes, const PackedSgd& sgd);
  void set_learning_rate(double learning_rate);
  // The host's count of the steps rows took (BatchNorm's num_batches_tracked) after a
  // step_padded in which `rows` stepped.
  void count_steps(const std::vector<std::int64_t>& rows);
  bool has_batch_statistics() const { return !stat_names_.empty(); }

  // Every row back at `start`, momentum zero, no step taken: a new job on the same tensors, whose
  // addresses a captured step keeps.
  void restart(const NamedTensors& start);

  // Row `row`'s tensors in `state_of` order and names, on the CPU.
  NamedTensors unpack(std::int64_t row) const;
  // Every row's, after one wait for the device, which also brings `also` (device tensors) to
  // the CPU into `also_out`.
  std::vector<NamedTensors> unpack_all(const std::vector<torch::Tensor>& also,
                                       std::vector<torch::Tensor>& also_out) const;

 private:
  struct Block {
    std::string name;
    std::int64_t stride = 1;
    bool shortcut = false;
  };
  using Tensors = std::vector<torch::Tensor>;
  const torch::Tensor& at(const Tensors& params, const std::string& name) const;
  torch::Tensor conv(const Tensors& w, const torch::Tensor& x, const std::string& name, std::int64_t stride,
                     std::int64_t padding, std::int64_t rows) const;
  torch::Tensor norm(const Tensors& w, Tensors& stats, const torch::Tensor& x, const std::string& name) const;
  torch::Tensor linear(const Tensors& w, const torch::Tensor& features, const std::string& name) const;
  torch::Tensor forward(const Tensors& w, Tensors& stats, const torch::Tensor& x, std::int64_t rows) const;
  NamedTensors row_state(std::int64_t row, const Tensors& params, const Tensors& stats) const;  // on the CPU
  torch::Tensor proximal_distance(const Tensors& w) const;  // [S]: each row's ||w - w_start||^2
  // `active` (optional, [S] of 0 and 1): rows at 0 keep their weights and momentum.
  void apply_sgd(Tensors& w, Tensors& momentum, const PackedSgd& sgd, const torch::Tensor& active = {}) const;

  std::int64_t clients_ = 0;
  bool resnet_ = false;
  std::int64_t padding_ = 0;  // the two-convolution CNNs' padding
  std::vector<Block> blocks_;
  NamedTensors layout_;  // the prototype's tensors (names, shapes, dtypes), as state_of lists them
  std::vector<std::string> param_names_, stat_names_;
  Tensors params_, momentum_;                          // [K, ...] per parameter
  Tensors start_;                                      // [1, ...]: every row starts from the task's weights
  torch::Tensor neg_lr_;                               // -learning rate, for step_padded
  Tensors stats_;                                      // [K, C] per BatchNorm running statistic
  std::vector<std::int64_t> steps_;                    // steps each row has taken (BatchNorm's num_batches_tracked)
  std::map<std::string, std::int64_t> tracked_start_;  // each BatchNorm's num_batches_tracked at the start
};

}  // namespace drift
