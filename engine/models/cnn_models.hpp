#pragma once
#include <torch/torch.h>

#include "engine/models/model.hpp"

namespace drift {

// Two conv blocks (conv, ReLU, 2x2 max-pool), a fully connected feature layer, a linear head.
// drift's CNNs are presets of this one shape.
struct TwoConvSpec {
  std::int64_t channels1 = 16, channels2 = 32;
  std::int64_t kernel = 5;
  std::int64_t padding = 0;
  std::int64_t features = 128;
};

// small-cnn: 16 and 32 channels, valid 5x5 convolutions, 128 features (~80k parameters;
// fast on one CPU thread). fedavg-cnn: McMahan et al. (2017), 32 and 64 channels, same-padded
// 5x5, 512 features (1,663,370 parameters for 28x28x1 input and 10 classes). cnn4: the
// "4-layer CNN" of FedKTL/HtFLlib (conv5x5 32, conv5x5 64, both valid, FC-512, classifier),
// which FedCCL's intra-domain experiments also name.
// fedau-cnn: FedAU's Fashion-MNIST CNN, 32 and 32 channels, same-padded 3x3, 128 features
// (211,690 parameters for 28x28x1 input and 10 classes).
TwoConvSpec small_cnn_spec();
TwoConvSpec fedavg_cnn_spec();
TwoConvSpec cnn4_spec();
TwoConvSpec fedau_cnn_spec();

class TwoConvCnn final : public Model {
 public:
  TwoConvCnn(const TwoConvSpec& spec, const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
             const std::string& name, const ModelOptions& options);
  // Both convolutions' padding, which the packed forward pass repeats.
  std::int64_t padding() const { return padding_; }

 protected:
  Extracted extract(const torch::Tensor& x, bool levels) override;

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc_{nullptr};
  std::int64_t padding_ = 0;
};

}  // namespace drift
