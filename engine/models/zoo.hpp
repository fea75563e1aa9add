#pragma once
// The rest of HtFLlib's heterogeneous model group (FedKTL's HtFE), scaled to small inputs:
// a MobileNetV2 and a GoogLeNet-style network. Both keep a stride-1 stem so that 28x28 and
// 32x32 images are not shrunk to nothing, and end in global average pooling.
#include <torch/torch.h>

#include "engine/models/model.hpp"

namespace drift {

// Inverted residual blocks (expansion t, output c, repeats n, first stride s) of torchvision's
// MobileNetV2 with every channel count scaled by width / 32, then a 1x1 conv to 1280 * width / 32
// features. width 32 is the original (2.2M parameters for 10 classes).
class MobileNetV2 final : public Model {
 public:
  MobileNetV2(std::int64_t width, const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
              const ModelOptions& options);

 protected:
  Extracted extract(const torch::Tensor& x, bool levels) override;

 private:
  torch::nn::Sequential stem_{nullptr}, last_{nullptr};
  std::vector<torch::nn::Sequential> stages_;  // of inverted residual blocks
};

// A stem conv (width channels), inception blocks 3a and 3b, a max-pool and inception 4a of
// GoogLeNet (channel counts scaled by width / 64), giving 512 * width / 64 features.
class GoogLeNetStyle final : public Model {
 public:
  GoogLeNetStyle(std::int64_t width, const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
                 const ModelOptions& options);

 protected:
  Extracted extract(const torch::Tensor& x, bool levels) override;

 private:
  torch::nn::Sequential stem_{nullptr};
  std::vector<std::shared_ptr<torch::nn::Module>> blocks_;
};

}  // namespace drift
