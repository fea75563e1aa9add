#include "engine/models/char_lstm.hpp"

#include "engine/core/error.hpp"

namespace drift {
namespace {

constexpr std::int64_t kEmbedding = 8;
constexpr std::int64_t kHidden = 256;
constexpr std::int64_t kLayers = 2;

}  // namespace

CharLstm::CharLstm(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
                   const ModelOptions& options) {
  if (input_shape.size() != 1 || input_shape[0] < 1)
    throw UserError("char-lstm reads token sequences [L]: use it with a text dataset (shakespeare)");
  // The vocabulary is the label set: the model predicts the next token.
  embedding_ = register_module("embedding", torch::nn::Embedding(num_classes, kEmbedding));
  lstm_ = register_module(
      "lstm", torch::nn::LSTM(torch::nn::LSTMOptions(kEmbedding, kHidden).num_layers(kLayers).batch_first(true)));
  build_head(kHidden, num_classes, options);
}

Extracted CharLstm::extract(const torch::Tensor& x, bool levels) {
  const auto tokens = x.to(torch::kInt64);
  auto [outputs, state] = lstm_->forward(embedding_->forward(tokens));
  Extracted out;
  out.features = outputs.select(1, outputs.size(1) - 1);
  if (levels) {
    const auto& last_hidden = std::get<0>(state);  // [layers, B, hidden]
    for (std::int64_t layer = 0; layer < kLayers; ++layer) out.levels.push_back(last_hidden[layer]);
  }
  return out;
}

}  // namespace drift
