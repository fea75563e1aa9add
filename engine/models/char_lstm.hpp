#pragma once
#include <torch/torch.h>

#include "engine/models/model.hpp"

namespace drift {

// LEAF's next-character model for Shakespeare (Caldas et al. 2018, models/shakespeare/
// stacked_lstm.py): each input token through an 8-dimensional embedding, a 2-layer LSTM of 256
// units, and the last step's output as the feature vector the head classifies. Inputs are
// token indices held as floats, [B, L] (engine/data/leaf_dataset.hpp).
class CharLstm final : public Model {
 public:
  CharLstm(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes, const ModelOptions& options);

 protected:
  Extracted extract(const torch::Tensor& x, bool levels) override;

 private:
  torch::nn::Embedding embedding_{nullptr};
  torch::nn::LSTM lstm_{nullptr};
};

}  // namespace drift
