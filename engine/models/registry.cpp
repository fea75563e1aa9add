#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "engine/config/catalog.hpp"
#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/models/char_lstm.hpp"
#include "engine/models/cnn_models.hpp"
#include "engine/models/exported_model.hpp"
#include "engine/models/model.hpp"
#include "engine/models/resnet.hpp"
#include "engine/models/torchscript_model.hpp"
#include "engine/models/zoo.hpp"

namespace drift {
namespace {

// PyTorch's default for Conv and Linear (kaiming_uniform with a = sqrt(5), and the matching
// bias rule) amounts to U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias alike. Drawing it
// from a private generator keeps the initial model a function of the seed alone.
void init_uniform_fan_in(torch::Tensor& weight, torch::Tensor& bias, at::Generator& gen) {
  std::int64_t fan_in = 1;
  for (std::int64_t d = 1; d < weight.dim(); ++d) fan_in *= weight.size(d);
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  weight.uniform_(-bound, bound, gen);
  if (bias.defined()) bias.uniform_(-bound, bound, gen);
}

// FedNH starts from prototypes that are mutually orthogonal where C <= d (unit rows in any case).
void init_orthogonal_rows(torch::Tensor& weight, at::Generator& gen) {
  const auto rows = weight.size(0), cols = weight.size(1);
  auto draw = torch::empty({std::max(rows, cols), std::min(rows, cols)}, torch::kFloat64).normal_(0.0, 1.0, gen);
  auto q = std::get<0>(at::linalg_qr(draw));  // orthonormal columns
  auto w = rows <= cols ? q.t() : q;
  weight.copy_(torch::nn::functional::normalize(w, torch::nn::functional::NormalizeFuncOptions().dim(1)));
}

// A layer of a TorchScript module whose weights are drawn from the seed: a weight of two or more
// dimensions (convolution, linear, embedding) is drawn as drift's own layers are, with its bias;
// anything else (normalisation layers) keeps the file's values (docs/torchscript.md).
void init_script_layer(torch::nn::Module& layer, at::Generator& gen) {
  auto params = layer.named_parameters(/*recurse=*/false);
  auto* weight = params.find("weight");
  if (weight == nullptr || weight->dim() < 2) return;
  auto* bias = params.find("bias");
  torch::Tensor none;
  init_uniform_fan_in(*weight, bias != nullptr ? *bias : none, gen);
}

// PyTorch's LSTM default: every weight and bias U(-1/sqrt(hidden), 1/sqrt(hidden)).
void init_recurrent(torch::nn::LSTMImpl& lstm, at::Generator& gen) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(lstm.options.hidden_size()));
  for (auto& p : lstm.parameters(/*recurse=*/false)) p.uniform_(-bound, bound, gen);
}

// Kaiming-normal (ReLU gain, fan-in) weights and zero biases for every convolution and linear
// layer outside the head (and a projection), as FedAU's cnn_mnist.py does to its feature
// layers; drawn from a stream of its own after the default draw.
void init_kaiming_features(torch::nn::Module& model, std::uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(stream_seed(seed, "model-init-kaiming"));
  torch::NoGradGuard no_grad;
  for (const auto& item : model.named_modules()) {
    const auto& path = item.key();
    const auto& m = item.value();
    if (path.rfind("head", 0) == 0 || path.rfind("projection", 0) == 0) continue;
    torch::Tensor weight, bias;
    if (auto* conv = m->as<torch::nn::Conv2dImpl>())
      weight = conv->weight, bias = conv->bias;
    else if (auto* linear = m->as<torch::nn::LinearImpl>())
      weight = linear->weight, bias = linear->bias;
    else
      continue;
    std::int64_t fan_in = 1;
    for (std::int64_t d = 1; d < weight.dim(); ++d) fan_in *= weight.size(d);
    weight.normal_(0.0, std::sqrt(2.0 / static_cast<double>(fan_in)), gen);
    if (bias.defined()) bias.zero_();
  }
}

}  // namespace

void init_parameters(torch::nn::Module& model, std::uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(stream_seed(seed, "model-init"));
  torch::NoGradGuard no_grad;
  for (const auto& m : model.modules(/*include_self=*/true)) {
    if (auto* conv = m->as<torch::nn::Conv2dImpl>())
      init_uniform_fan_in(conv->weight, conv->bias, gen);
    else if (auto* linear = m->as<torch::nn::LinearImpl>())
      init_uniform_fan_in(linear->weight, linear->bias, gen);
    else if (m->name() == "CosineHead")
      init_orthogonal_rows(m->named_parameters(false)["weight"], gen);
    else if (auto* lstm = m->as<torch::nn::LSTMImpl>())
      init_recurrent(*lstm, gen);
    else if (auto* embedding = m->as<torch::nn::EmbeddingImpl>())
      embedding->weight.normal_(0.0, 1.0, gen);
    else if (m->name() == kDrawnScriptLayer)
      init_script_layer(*m, gen);
  }
}

namespace {

using Shape = std::vector<std::int64_t>;

// A two-convolution CNN (cnn_models.hpp) of `spec`; it packs.
ModelInfo two_conv(std::string name, std::string description, TwoConvSpec spec) {
  ModelInfo info{name, std::move(description),
                 [spec, name](const Shape& input, std::int64_t classes, const ModelOptions& options) {
                   return std::make_shared<TwoConvCnn>(spec, input, classes, name, options);
                 }};
  info.packs = PackedLayout::two_conv;
  return info;
}

// A ResNet of BasicBlock stages `blocks`, base width [model] width (the papers' 64 by default);
// it packs.
ModelInfo resnet(std::string name, std::string description, std::vector<std::int64_t> blocks) {
  ModelInfo info{std::move(name), std::move(description),
                 [blocks](const Shape& input, std::int64_t classes, const ModelOptions& options) {
                   return std::make_shared<ResNet>(blocks, options.width > 0 ? options.width : 64, input, classes,
                                                   options);
                 }};
  info.packs = PackedLayout::resnet;
  return info;
}

// A row whose module is the file of model.file, read and checked by `inspect`.
ModelInfo from_file(ModelInfo info, std::function<ModelFileInfo(const std::string&)> inspect, std::string kind,
                    std::string features_how) {
  info.any_input = true;
  info.from_file = true;
  info.inspect = std::move(inspect);
  info.file_kind = std::move(kind);
  info.features_how = std::move(features_how);
  return info;
}

// A row whose feature layers start Kaiming-normal (WeightInit::kaiming_relu).
ModelInfo kaiming_relu(ModelInfo info) {
  info.init = WeightInit::kaiming_relu;
  return info;
}

Rows<ModelInfo>& model_rows() {
  static Rows<ModelInfo> catalog = {
      two_conv("small-cnn", "2 conv layers (16, 32) + FC-128 features, ~80k parameters", small_cnn_spec()),
      two_conv("fedavg-cnn", "McMahan et al. 2017 CNN: conv 32, conv 64, FC-512 features, 1.66M parameters",
               fedavg_cnn_spec()),
      two_conv("cnn4", "FedKTL's 4-layer CNN: conv5x5 32, conv5x5 64 (valid), FC-512 features", cnn4_spec()),
      kaiming_relu(two_conv("fedau-cnn",
                            "FedAU's Fashion-MNIST CNN: conv3x3 32, conv3x3 32 (same), FC-128 features, 211,690 "
                            "parameters; Kaiming-normal feature layers, zero biases, as its code",
                            fedau_cnn_spec())),
      resnet("resnet8", "FedSKC's ResNet-8: 3x3 stem + 3 BasicBlocks (w, 2w, 4w), w = [model] width (64)", {1, 1, 1}),
      resnet("resnet10", "FedSC's ResNet-10: 3x3 stem + 4 BasicBlocks (w .. 8w), w = [model] width (64)", {1, 1, 1, 1}),
      resnet("resnet4", "HtFE's ResNet-4: 3x3 stem + 1 BasicBlock (w), w = [model] width (64)", {1}),
      resnet("resnet6", "HtFE's ResNet-6: 3x3 stem + 2 BasicBlocks (w, 2w), w = [model] width (64)", {1, 1}),
      resnet("resnet18", "ResNet-18 layout: 3x3 stem + 2, 2, 2, 2 BasicBlocks (w .. 8w), w = [model] width (64)",
             {2, 2, 2, 2}),
      resnet("resnet34", "ResNet-34 layout: 3x3 stem + 3, 4, 6, 3 BasicBlocks (w .. 8w), w = [model] width (64)",
             {3, 4, 6, 3}),
      {"mobilenetv2", "MobileNetV2 with a stride-1 stem; channels x width/32 ([model] width, default 32)",
       [](const Shape& input, std::int64_t classes, const ModelOptions& options) {
         return std::make_shared<MobileNetV2>(options.width > 0 ? options.width : 32, input, classes, options);
       }},
      {"googlenet", "GoogLeNet-style: stem, inception 3a, 3b, pool, 4a; channels x width/64 (default 64)",
       [](const Shape& input, std::int64_t classes, const ModelOptions& options) {
         return std::make_shared<GoogLeNetStyle>(options.width > 0 ? options.width : 64, input, classes, options);
       }},
      {"char-lstm",
       "LEAF's Shakespeare model: 8-dim character embedding, 2-layer LSTM of 256 units, the last "
       "step's output as features (text datasets)",
       [](const Shape& input, std::int64_t classes, const ModelOptions& options) {
         return std::make_shared<CharLstm>(input, classes, options);
       },
       true},
      from_file({"torchscript",
                 "a TorchScript module from model.file (torch.jit.save): forward(x) gives the logits, an optional "
                 "features(x) the features (docs/torchscript.md)",
                 make_script_model},
                inspect_script_module, "a TorchScript module, the file torch.jit.save writes",
                "add a method features(self, x) returning a [batch, d] tensor to the module, marked "
                "@torch.jit.export (docs/torchscript.md)"),
      from_file({"exported",
                 "a program from model.file (torch.export.save, a .pt2 file): forward(x) gives the logits, or "
                 "(logits, features) (docs/models.md)",
                 make_exported_model},
                inspect_exported_program, "an exported program, the .pt2 file torch.export.save writes",
                "make forward(x) return (logits, features), features a [batch, d] tensor, and export it again "
                "(docs/models.md#features)"),
  };
  return catalog;
}

}  // namespace

const Rows<ModelInfo>& model_catalog() { return model_rows(); }

const std::string* file_architecture(const Scenario& s) {
  const auto reads_file = [](const std::string& name) {
    const auto* row = find_model(name);
    return row != nullptr && row->from_file;
  };
  if (reads_file(s.model)) return &s.model;
  for (const auto& name : s.model_group)
    if (reads_file(name)) return &name;
  return nullptr;
}

void register_model(ModelInfo info) {
  if (!info.make) throw UserError("a plugin adds model '" + info.name + "' without a factory (make)");
  add_row(model_rows(), std::move(info), "model");
}

const ModelInfo* find_model(const std::string& name) { return find_row(model_catalog(), name); }

std::vector<std::string> model_names() { return row_names(model_catalog()); }

std::shared_ptr<Model> make_model(const std::string& name, const std::vector<std::int64_t>& input_shape,
                                  std::int64_t num_classes, std::uint64_t seed, const ModelOptions& options) {
  const auto& row = row_named(model_catalog(), name, "model");
  auto model = row.make(input_shape, num_classes, options);
  init_parameters(*model, seed);
  if (row.init == WeightInit::kaiming_relu) init_kaiming_features(*model, seed);
  model->set_recipe({name, input_shape, num_classes, seed, options});
  return model;
}

std::shared_ptr<Model> make_model(const ModelRecipe& recipe) {
  return make_model(recipe.name, recipe.input_shape, recipe.num_classes, recipe.seed, recipe.options);
}

}  // namespace drift
