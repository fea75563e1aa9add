#pragma once
// CIFAR-style ResNets adapted to any [C, H, W] input: a 3x3 stem (no max-pool), stages of
// BasicBlocks, the width doubling and the side halving at every stage after the first, global
// average pooling. resnet8 = FedSKC's ResNet_cifar(8, scaling 4) (3 stages, 64/128/256,
// d = 256); resnet10 = FedSC's resnet10 (4 stages, 64..512, d = 512). HtFLlib's group for
// FedKTL adds resnet4 and resnet6 (1 and 2 stages of one block), resnet18 (2, 2, 2, 2 blocks)
// and resnet34 (3, 4, 6, 3).
#include <torch/torch.h>

#include "engine/models/model.hpp"

namespace drift {

class BasicBlockImpl : public torch::nn::Module {
 public:
  BasicBlockImpl(std::int64_t in, std::int64_t out, std::int64_t stride);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, shortcut_conv_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, shortcut_bn_{nullptr};
};
TORCH_MODULE(BasicBlock);

class ResNet final : public Model {
 public:
  // Stage s has blocks[s] BasicBlocks of width `width` * 2^s.
  ResNet(const std::vector<std::int64_t>& blocks, std::int64_t width, const std::vector<std::int64_t>& input_shape,
         std::int64_t num_classes, const ModelOptions& options);

 protected:
  Extracted extract(const torch::Tensor& x, bool levels) override;

 private:
  torch::nn::Conv2d stem_{nullptr};
  torch::nn::BatchNorm2d stem_bn_{nullptr};
  std::vector<BasicBlock> blocks_;
  std::vector<bool> ends_stage_;  // per block: the last of its stage
};

}  // namespace drift
