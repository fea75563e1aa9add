#include "engine/models/cnn_models.hpp"

#include "engine/core/error.hpp"

namespace drift {
namespace F = torch::nn::functional;

namespace {

std::int64_t after_valid_conv_and_pool(std::int64_t size, std::int64_t kernel) { return (size - kernel + 1) / 2; }

void require_input(const std::vector<std::int64_t>& shape, std::int64_t min_side, const char* model) {
  if (shape.size() != 3 || shape[1] < min_side || shape[2] < min_side)
    throw UserError(std::string(model) + " needs [C, H, W] input of at least " + std::to_string(min_side) + "x" +
                    std::to_string(min_side));
}

}  // namespace

SmallCnn::SmallCnn(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes) {
  require_input(input_shape, 16, "small-cnn");
  const auto h = after_valid_conv_and_pool(after_valid_conv_and_pool(input_shape[1], 5), 5);
  const auto w = after_valid_conv_and_pool(after_valid_conv_and_pool(input_shape[2], 5), 5);
  conv1_ = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(input_shape[0], 16, 5)));
  conv2_ = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 5)));
  fc_ = register_module("fc", torch::nn::Linear(32 * h * w, 128));
  head_ = register_module("head", torch::nn::Linear(128, num_classes));
}

ModelOutput SmallCnn::forward(const torch::Tensor& x) {
  auto y = F::max_pool2d(torch::relu(conv1_->forward(x)), F::MaxPool2dFuncOptions(2));
  y = F::max_pool2d(torch::relu(conv2_->forward(y)), F::MaxPool2dFuncOptions(2));
  auto features = torch::relu(fc_->forward(y.flatten(1)));
  return {features, head_->forward(features)};
}

FedAvgCnn::FedAvgCnn(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes) {
  require_input(input_shape, 4, "fedavg-cnn");
  const auto h = input_shape[1] / 2 / 2, w = input_shape[2] / 2 / 2;
  conv1_ = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(input_shape[0], 32, 5).padding(2)));
  conv2_ = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 5).padding(2)));
  fc_ = register_module("fc", torch::nn::Linear(64 * h * w, 512));
  head_ = register_module("head", torch::nn::Linear(512, num_classes));
}

ModelOutput FedAvgCnn::forward(const torch::Tensor& x) {
  auto y = F::max_pool2d(torch::relu(conv1_->forward(x)), F::MaxPool2dFuncOptions(2));
  y = F::max_pool2d(torch::relu(conv2_->forward(y)), F::MaxPool2dFuncOptions(2));
  auto features = torch::relu(fc_->forward(y.flatten(1)));
  return {features, head_->forward(features)};
}

}  // namespace drift
