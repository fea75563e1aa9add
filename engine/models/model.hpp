#pragma once
// Every model maps a batch to {features, logits}: algorithms that work on representations
// (prototypes, contrastive terms) read `features`, the loss reads `logits`.
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace drift {

struct ModelOutput {
  torch::Tensor features;  // [B, d] penultimate representation
  torch::Tensor logits;    // [B, C]
};

class Model : public torch::nn::Module {
 public:
  virtual ModelOutput forward(const torch::Tensor& x) = 0;
  virtual std::int64_t feature_dim() const = 0;
};

struct ModelInfo {
  std::string name;
  std::string description;
};
const std::vector<ModelInfo>& model_catalog();
std::vector<std::string> model_names();

// Builds `name` for inputs of shape {C, H, W} and initialises every weight from the
// ("model-init") stream of `seed`, so the initial model never depends on global torch state.
std::shared_ptr<Model> make_model(const std::string& name, const std::vector<std::int64_t>& input_shape,
                                  std::int64_t num_classes, std::uint64_t seed);

}  // namespace drift
