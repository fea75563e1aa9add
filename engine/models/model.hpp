#pragma once
// Every model is a backbone (the architecture) followed by a head that algorithms may shape:
// a MOON projection, a FedNH cosine classifier, or the plain linear classifier.
// It maps a batch to {features, logits}: algorithms that work on representations
// (prototypes, contrastive terms) read `features`, the loss reads `logits`.
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace drift {

struct ModelOutput {
  torch::Tensor features;  // [B, d] what the classifier reads (the projection when there is one)
  torch::Tensor logits;    // [B, C]
  // Globally pooled outputs of each stage, shallow to deep, when ModelOptions::feature_levels
  // is set (FedRCL); the last level is the backbone's feature vector.
  std::vector<torch::Tensor> levels;
};

enum class HeadKind { linear, cosine };

// What an algorithm asks of the architecture it trains; the defaults are the plain model.
struct ModelOptions {
  std::int64_t width = 0;           // base channels of the ResNets; 0 = the paper's 64
  std::int64_t projection_dim = 0;  // > 0: Linear(d,d) -> ReLU -> Linear(d,P) before the classifier
  HeadKind head = HeadKind::linear; // cosine: logits = s * W normalize(z), unit rows of W, learnable s
  bool feature_levels = false;      // fill ModelOutput::levels
};

// Enough to build an identical, freshly initialised model: algorithms that keep extra copies
// (MOON's global and previous models) build them from it.
struct ModelRecipe {
  std::string name;
  std::vector<std::int64_t> input_shape;
  std::int64_t num_classes = 0;
  std::uint64_t seed = 0;
  ModelOptions options;
};

// The backbone's output: its feature vector and, on request, the pooled stage outputs.
struct Extracted {
  torch::Tensor features;
  std::vector<torch::Tensor> levels;
};

class Model : public torch::nn::Module {
 public:
  ModelOutput forward(const torch::Tensor& x);
  // Width of ModelOutput::features.
  std::int64_t feature_dim() const { return feature_dim_; }
  const ModelRecipe& recipe() const { return recipe_; }
  void set_recipe(ModelRecipe recipe) { recipe_ = std::move(recipe); }

 protected:
  virtual Extracted extract(const torch::Tensor& x, bool levels) = 0;
  // Derived constructors call this last, so the head's tensors come after the backbone's.
  void build_head(std::int64_t backbone_dim, std::int64_t num_classes, const ModelOptions& options);

 private:
  torch::nn::Sequential projection_{nullptr};
  torch::nn::Linear linear_head_{nullptr};
  std::shared_ptr<torch::nn::Module> cosine_head_;
  torch::Tensor prototypes_, scale_;  // cosine head: [C, d] and [1]
  std::int64_t feature_dim_ = 0;
  bool levels_ = false;
  ModelRecipe recipe_;
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
                                  std::int64_t num_classes, std::uint64_t seed, const ModelOptions& options = {});
std::shared_ptr<Model> make_model(const ModelRecipe& recipe);

}  // namespace drift
