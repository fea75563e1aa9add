#pragma once
#include <torch/torch.h>

#include "engine/models/model.hpp"

namespace drift {

// Two conv blocks (16 and 32 channels, 5x5, max-pool), FC to 128 features, linear head.
// About 80k parameters: fast on one CPU thread, ~88 % on Fashion-MNIST when trained centrally.
class SmallCnn final : public Model {
 public:
  SmallCnn(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes);
  ModelOutput forward(const torch::Tensor& x) override;
  std::int64_t feature_dim() const override { return 128; }

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc_{nullptr}, head_{nullptr};
};

// The CNN of McMahan et al. (2017): conv5x5-32, pool, conv5x5-64, pool, FC-512, head
// (1,663,370 parameters for 28x28x1 input and 10 classes).
class FedAvgCnn final : public Model {
 public:
  FedAvgCnn(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes);
  ModelOutput forward(const torch::Tensor& x) override;
  std::int64_t feature_dim() const override { return 512; }

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc_{nullptr}, head_{nullptr};
};

}  // namespace drift
