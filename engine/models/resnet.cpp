#include "engine/models/resnet.hpp"

#include "engine/core/error.hpp"

namespace drift {
namespace {

torch::nn::Conv2dOptions conv3x3(std::int64_t in, std::int64_t out, std::int64_t stride) {
  return torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false);
}

}  // namespace

BasicBlockImpl::BasicBlockImpl(std::int64_t in, std::int64_t out, std::int64_t stride) {
  conv1_ = register_module("conv1", torch::nn::Conv2d(conv3x3(in, out, stride)));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(out));
  conv2_ = register_module("conv2", torch::nn::Conv2d(conv3x3(out, out, 1)));
  bn2_ = register_module("bn2", torch::nn::BatchNorm2d(out));
  if (stride != 1 || in != out) {
    shortcut_conv_ = register_module(
        "shortcut_conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)));
    shortcut_bn_ = register_module("shortcut_bn", torch::nn::BatchNorm2d(out));
  }
}

torch::Tensor BasicBlockImpl::forward(const torch::Tensor& x) {
  auto y = torch::relu(bn1_->forward(conv1_->forward(x)));
  y = bn2_->forward(conv2_->forward(y));
  auto skip = shortcut_conv_ ? shortcut_bn_->forward(shortcut_conv_->forward(x)) : x;
  return torch::relu(y + skip);
}

ResNet::ResNet(const std::vector<std::int64_t>& blocks, std::int64_t width,
               const std::vector<std::int64_t>& input_shape, std::int64_t num_classes, const ModelOptions& options) {
  if (input_shape.size() != 3) throw UserError("resnet needs [C, H, W] input");
  if (width < 1) throw UserError("resnet width must be positive");
  if (blocks.empty()) throw UserError("resnet needs at least one stage");
  stem_ = register_module("stem", torch::nn::Conv2d(conv3x3(input_shape[0], width, 1)));
  stem_bn_ = register_module("stem_bn", torch::nn::BatchNorm2d(width));
  std::int64_t in = width;
  for (std::size_t s = 0; s < blocks.size(); ++s) {
    const std::int64_t out = width << s;
    // The first block of a stage keeps the name it had when every stage had one block, so
    // resnet8 and resnet10 keep their tensor names.
    for (std::int64_t b = 0; b < blocks[s]; ++b) {
      const auto name = "layer" + std::to_string(s + 1) + (b == 0 ? "" : "_" + std::to_string(b));
      blocks_.push_back(register_module(name, BasicBlock(in, out, s > 0 && b == 0 ? 2 : 1)));
      ends_stage_.push_back(b + 1 == blocks[s]);
      in = out;
    }
  }
  build_head(in, num_classes, options);
}

Extracted ResNet::extract(const torch::Tensor& x, bool levels) {
  Extracted out;
  auto y = torch::relu(stem_bn_->forward(stem_->forward(x)));
  if (levels) out.levels.push_back(y.mean({2, 3}));
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    y = blocks_[i]->forward(y);
    if (levels && ends_stage_[i]) out.levels.push_back(y.mean({2, 3}));  // one level per stage
  }
  out.features = y.mean({2, 3});
  return out;
}

}  // namespace drift
