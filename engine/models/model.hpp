#pragma once
// Every model is a backbone (the architecture) followed by a head that algorithms may shape:
// a MOON projection, a FedNH cosine classifier, or the plain linear classifier.
// It maps a batch to {features, logits}: algorithms that work on representations
// (prototypes, contrastive terms) read `features`, the loss reads `logits`.
#include <torch/torch.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/catalog.hpp"
#include "engine/config/scenario.hpp"

namespace drift {

struct ModelOutput {
  torch::Tensor features;  // [B, d] what the classifier reads (the projection when there is one)
  torch::Tensor logits;    // [B, C]
  // Globally pooled outputs of each stage, shallow to deep, when ModelOptions::feature_levels
  // is set (FedRCL); the last level is the backbone's feature vector.
  std::vector<torch::Tensor> levels;
  // ETF head only: h(features) [B, K], the point in ETF space before normalisation (FedKTL's
  // prototypes are built from it); `logits` then holds its cosines to the class vectors.
  torch::Tensor embedding;
};

// linear: logits = W z + b. cosine: logits = s * W normalize(z), unit rows of W, learnable s.
// etf: logits = normalize(h(z))^T V, cosines to the columns of a fixed simplex ETF V [K, C]
// (FedKTL), with h = Linear(d, K) trained and V drawn from `shared_seed` (identical for
// every client, whatever its own initialisation).
enum class HeadKind { linear, cosine, etf };

// What an algorithm asks of the architecture it trains; the defaults are the plain model.
struct ModelOptions {
  std::int64_t width = 0;           // base channels of the ResNets; 0 = the paper's 64
  std::int64_t projection_dim = 0;  // > 0: Linear(d,d) -> ReLU -> Linear(d,P) before the classifier
  HeadKind head = HeadKind::linear;
  bool feature_levels = false;  // fill ModelOutput::levels
  // > 0: the backbone's features are average-pooled (or repeated) to this width
  // (AdaptiveAvgPool1d), so architectures of different widths share one head shape.
  std::int64_t feature_dim = 0;
  std::int64_t etf_dim = 0;       // etf head: K (0 = the number of classes)
  std::uint64_t shared_seed = 0;  // etf head: seed of the ETF, the same for every client
  // torchscript: the module file (an absolute path) and the digest the scenario recorded for it;
  // script_weights keeps the file's weights, false draws them from the seed as drift's own.
  std::string script_file;
  std::string script_digest;
  bool script_weights = true;
  // torchscript: the algorithm reads features or exchanges the head, so drift reads the
  // module's features(x) and puts its own head on them (docs/torchscript.md).
  bool script_backbone = false;
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

// [in, out]: column i averages the window of `in` inputs that AdaptiveAvgPool1d averages into
// output i, so features.matmul(matrix) is that pooling (and a repetition when out > in).
torch::Tensor adaptive_pool_matrix(std::int64_t in, std::int64_t out);

class Model : public torch::nn::Module {
 public:
  // A model whose module computes its logits itself (torchscript) overrides it.
  virtual ModelOutput forward(const torch::Tensor& x);
  // Width of ModelOutput::features.
  std::int64_t feature_dim() const { return feature_dim_; }
  const ModelRecipe& recipe() const { return recipe_; }
  void set_recipe(ModelRecipe recipe) { recipe_ = std::move(recipe); }

 protected:
  virtual Extracted extract(const torch::Tensor& x, bool levels) = 0;
  torch::Tensor pool_features(const torch::Tensor& features);
  // Derived constructors call this last, so the head's tensors come after the backbone's.
  void build_head(std::int64_t backbone_dim, std::int64_t num_classes, const ModelOptions& options);

 private:
  torch::nn::Sequential projection_{nullptr};
  torch::nn::Linear linear_head_{nullptr};
  std::shared_ptr<torch::nn::Module> cosine_head_;
  torch::Tensor prototypes_, scale_;  // cosine head: [C, d] and [1]
  torch::Tensor etf_;                 // etf head: [K, C], a buffer that is never trained
  std::int64_t pooled_dim_ = 0;       // ModelOptions::feature_dim
  torch::Tensor pool_matrix_;         // on a GPU: adaptive_pool_matrix, where the features are
  std::int64_t feature_dim_ = 0;
  bool levels_ = false;
  ModelRecipe recipe_;
};

// How an architecture's weights are first drawn (from the seed's "model-init" streams).
enum class WeightInit : std::uint8_t {
  fan_in_uniform,  // PyTorch's default for every layer: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
  kaiming_relu,    // its feature layers Kaiming-normal for ReLU (std sqrt(2 / fan_in)), biases 0; the head as default
};

// What a model file (model.file) offers, read at validation before any data is loaded.
struct ModelFileInfo {
  std::string digest;         // of the file's bytes (16 hex digits)
  bool has_features = false;  // it gives features beside the logits (docs/models.md)
  // The batch sizes the file accepts (an exported program's dynamic batch dimension).
  std::int64_t batch_min = 0, batch_max = INT64_MAX;
};

// How several clients of an architecture train as one packed module (devices.pack;
// engine/training/packed_model.hpp), whose forward pass is written once per layout. The packed
// model checks that the row's module is of that layout's class.
enum class PackedLayout : std::uint8_t {
  none,      // does not pack
  two_conv,  // TwoConvCnn: two conv + pool blocks, a feature layer, the head
  resnet,    // ResNet: a stem and stages of BasicBlocks, the head
};

struct ModelInfo {
  // Builds the architecture for one sample's shape ({C, H, W}, or {L} for text) and the number
  // of classes, its head as `options` ask (Model::build_head); make_model draws its weights.
  using Factory = std::function<std::shared_ptr<Model>(const std::vector<std::int64_t>& input_shape,
                                                       std::int64_t num_classes, const ModelOptions& options)>;
  std::string name;
  std::string description;
  Factory make;
  bool text = false;       // reads token sequences [L] instead of images [C, H, W]
  bool any_input = false;  // reads whatever the dataset holds (a module brought from a file)
  // Its module is the file of model.file: validation inspects it and records its digest, so a
  // run, its resume and its workers refuse another file.
  bool from_file = false;
  WeightInit init = WeightInit::fan_in_uniform;
  PackedLayout packs = PackedLayout::none;
  // from_file: reads the file (in a separate process first), UserError for one drift refuses.
  std::function<ModelFileInfo(const std::string& path)> inspect = nullptr;
  // from_file: what the file is and what writes it, for messages.
  std::string file_kind = "";  // "a TorchScript module, the file torch.jit.save writes"
  // from_file: how such a file gives its features, for an algorithm that reads them.
  std::string features_how = "";
};
const ModelInfo* find_model(const std::string& name);
const Rows<ModelInfo>& model_catalog();
// A plugin's architecture, after the built-in ones (docs/plugins.md); a taken name throws UserError.
void register_model(ModelInfo info);
std::vector<std::string> model_names();
// The architecture some client trains whose row reads model.file (from_file), or nullptr.
const std::string* file_architecture(const Scenario& s);
// Whether any client trains the module of model.file.
inline bool uses_torchscript(const Scenario& s) { return file_architecture(s) != nullptr; }

// Builds `name` for inputs of shape {C, H, W} and initialises every weight from the
// ("model-init") stream of `seed`, so the initial model never depends on global torch state.
std::shared_ptr<Model> make_model(const std::string& name, const std::vector<std::int64_t>& input_shape,
                                  std::int64_t num_classes, std::uint64_t seed, const ModelOptions& options = {});
std::shared_ptr<Model> make_model(const ModelRecipe& recipe);

// Draws every convolution and linear layer of `module` (uniform fan-in) from the
// ("model-init") stream of `seed`, as make_model does; for modules algorithms build
// themselves, so they never depend on global torch state.
void init_parameters(torch::nn::Module& module, std::uint64_t seed);

}  // namespace drift
