#include "engine/models/zoo.hpp"

#include <algorithm>

#include "engine/core/error.hpp"

namespace drift {
namespace {

// Channel counts scaled by factor / base and rounded to a multiple of 8 (torchvision's rule).
std::int64_t scaled(std::int64_t channels, std::int64_t factor, std::int64_t base) {
  const std::int64_t c = (channels * factor + base / 2) / base;
  return std::max<std::int64_t>(8, (c + 4) / 8 * 8);
}

torch::nn::Sequential conv_bn(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                              std::int64_t groups, bool relu6) {
  torch::nn::Sequential s(
      torch::nn::Conv2d(
          torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).groups(groups).bias(false)),
      torch::nn::BatchNorm2d(out));
  if (relu6) s->push_back(torch::nn::ReLU6());
  return s;
}

void check_input(const std::vector<std::int64_t>& input_shape, std::int64_t width, const char* name) {
  if (input_shape.size() != 3) throw UserError(std::string(name) + " needs [C, H, W] input");
  if (width < 1) throw UserError(std::string(name) + " width must be positive");
}

// torchvision's BasicConv2d: conv without bias, BatchNorm (eps 0.001), ReLU.
torch::nn::Sequential basic_conv(std::int64_t in, std::int64_t out, std::int64_t kernel) {
  return torch::nn::Sequential(
      torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).padding(kernel / 2).bias(false)),
      torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(out).eps(0.001)), torch::nn::ReLU());
}

class InceptionImpl : public torch::nn::Module {
 public:
  // Output channels: c1 + c3 + c5 + pool; the "5x5" branch uses 3x3, as torchvision's does.
  InceptionImpl(std::int64_t in, std::int64_t c1, std::int64_t r3, std::int64_t c3, std::int64_t r5, std::int64_t c5,
                std::int64_t pool)
      : b1_(register_module("b1", basic_conv(in, c1, 1))),
        b2_reduce_(register_module("b2_reduce", basic_conv(in, r3, 1))),
        b2_(register_module("b2", basic_conv(r3, c3, 3))),
        b3_reduce_(register_module("b3_reduce", basic_conv(in, r5, 1))),
        b3_(register_module("b3", basic_conv(r5, c5, 3))),
        b4_(register_module("b4", basic_conv(in, pool, 1))),
        out_(c1 + c3 + c5 + pool) {}
  torch::Tensor forward(const torch::Tensor& x) {
    const auto pooled = torch::max_pool2d(x, 3, 1, 1);
    return torch::cat({b1_->forward(x), b2_->forward(b2_reduce_->forward(x)), b3_->forward(b3_reduce_->forward(x)),
                       b4_->forward(pooled)},
                      1);
  }
  std::int64_t out() const { return out_; }

 private:
  torch::nn::Sequential b1_, b2_reduce_, b2_, b3_reduce_, b3_, b4_;
  std::int64_t out_;
};
TORCH_MODULE(Inception);

// MobileNetV2's block: expand (1x1, unless t = 1), depthwise 3x3, linear 1x1 projection; the
// input is added back when the shapes allow.
class InvertedResidualImpl : public torch::nn::Module {
 public:
  InvertedResidualImpl(std::int64_t in, std::int64_t out, std::int64_t stride, std::int64_t expansion)
      : residual_(stride == 1 && in == out) {
    const auto hidden = in * expansion;
    if (expansion != 1) expand_ = register_module("expand", conv_bn(in, hidden, 1, 1, 1, true));
    depthwise_ = register_module("depthwise", conv_bn(hidden, hidden, 3, stride, hidden, true));
    project_ = register_module("project", conv_bn(hidden, out, 1, 1, 1, false));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = expand_ ? expand_->forward(x) : x;
    y = project_->forward(depthwise_->forward(y));
    return residual_ ? x + y : y;
  }

 private:
  torch::nn::Sequential expand_{nullptr}, depthwise_{nullptr}, project_{nullptr};
  bool residual_;
};
TORCH_MODULE(InvertedResidual);

}  // namespace

MobileNetV2::MobileNetV2(std::int64_t width, const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
                         const ModelOptions& options) {
  check_input(input_shape, width, "mobilenetv2");
  struct Row {
    std::int64_t t, c, n, s;
  };
  const Row rows[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  std::int64_t in = scaled(32, width, 32);
  stem_ = register_module("stem", conv_bn(input_shape[0], in, 3, 1, 1, true));
  for (std::size_t r = 0; r < std::size(rows); ++r) {
    const auto& row = rows[r];
    const auto out = scaled(row.c, width, 32);
    torch::nn::Sequential stage;
    for (std::int64_t i = 0; i < row.n; ++i) {
      stage->push_back(InvertedResidual(in, out, i == 0 ? row.s : 1, row.t));
      in = out;
    }
    stages_.push_back(register_module("stage" + std::to_string(r + 1), stage));
  }
  const auto features = scaled(1280, width, 32);
  last_ = register_module("last", conv_bn(in, features, 1, 1, 1, true));
  build_head(features, num_classes, options);
}

Extracted MobileNetV2::extract(const torch::Tensor& x, bool levels) {
  Extracted out;
  auto y = stem_->forward(x);
  for (auto& stage : stages_) {
    y = stage->forward(y);
    if (levels) out.levels.push_back(y.mean({2, 3}));
  }
  out.features = last_->forward(y).mean({2, 3});
  return out;
}

GoogLeNetStyle::GoogLeNetStyle(std::int64_t width, const std::vector<std::int64_t>& input_shape,
                               std::int64_t num_classes, const ModelOptions& options) {
  check_input(input_shape, width, "googlenet");
  auto c = [width](std::int64_t channels) { return std::max<std::int64_t>(4, channels * width / 64); };
  stem_ = register_module("stem", basic_conv(input_shape[0], c(64), 3));
  auto a3 = register_module("inception3a", Inception(c(64), c(64), c(96), c(128), c(16), c(32), c(32)));
  auto b3 = register_module("inception3b", Inception(a3->out(), c(128), c(128), c(192), c(32), c(96), c(64)));
  auto a4 = register_module("inception4a", Inception(b3->out(), c(192), c(96), c(208), c(16), c(48), c(64)));
  blocks_ = {a3, b3, a4};
  build_head(a4->out(), num_classes, options);
}

Extracted GoogLeNetStyle::extract(const torch::Tensor& x, bool levels) {
  Extracted out;
  auto y = stem_->forward(x);
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    if (i == 2) y = torch::max_pool2d(y, 3, 2, 1);  // between the 3x and 4x blocks, as in GoogLeNet
    y = std::static_pointer_cast<InceptionImpl>(blocks_[i])->forward(y);
    if (levels) out.levels.push_back(y.mean({2, 3}));
  }
  out.features = y.mean({2, 3});
  return out;
}

}  // namespace drift
