#include "engine/models/cnn_models.hpp"

#include "engine/core/error.hpp"

namespace drift {
namespace F = torch::nn::functional;

TwoConvSpec small_cnn_spec() { return {16, 32, 5, 0, 128}; }
TwoConvSpec fedavg_cnn_spec() { return {32, 64, 5, 2, 512}; }
TwoConvSpec cnn4_spec() { return {32, 64, 5, 0, 512}; }
TwoConvSpec fedau_cnn_spec() { return {32, 32, 3, 1, 128}; }

TwoConvCnn::TwoConvCnn(const TwoConvSpec& spec, const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
                       const std::string& name, const ModelOptions& options)
    : padding_(spec.padding) {
  auto side_after_blocks = [&](std::int64_t side) {
    for (int block = 0; block < 2; ++block) side = (side + 2 * spec.padding - spec.kernel + 1) / 2;
    return side;
  };
  if (input_shape.size() != 3 || side_after_blocks(input_shape[1]) < 1 || side_after_blocks(input_shape[2]) < 1)
    throw UserError(name + " needs [C, H, W] input large enough for two conv + pool blocks");
  const auto h = side_after_blocks(input_shape[1]), w = side_after_blocks(input_shape[2]);
  conv1_ = register_module(
      "conv1",
      torch::nn::Conv2d(torch::nn::Conv2dOptions(input_shape[0], spec.channels1, spec.kernel).padding(spec.padding)));
  conv2_ = register_module(
      "conv2",
      torch::nn::Conv2d(torch::nn::Conv2dOptions(spec.channels1, spec.channels2, spec.kernel).padding(spec.padding)));
  fc_ = register_module("fc", torch::nn::Linear(spec.channels2 * h * w, spec.features));
  build_head(spec.features, num_classes, options);
}

Extracted TwoConvCnn::extract(const torch::Tensor& x, bool levels) {
  Extracted out;
  auto y = F::max_pool2d(torch::relu(conv1_->forward(x)), F::MaxPool2dFuncOptions(2));
  if (levels) out.levels.push_back(y.mean({2, 3}));
  y = F::max_pool2d(torch::relu(conv2_->forward(y)), F::MaxPool2dFuncOptions(2));
  if (levels) out.levels.push_back(y.mean({2, 3}));
  out.features = torch::relu(fc_->forward(y.flatten(1)));
  if (levels) out.levels.push_back(out.features);
  return out;
}

}  // namespace drift
