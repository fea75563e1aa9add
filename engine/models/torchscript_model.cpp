#include "engine/models/torchscript_model.hpp"

#include <caffe2/serialize/versions.h>
#include <torch/script.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>

#include "engine/core/error.hpp"
#include "engine/core/version.hpp"
#include "engine/models/model_file.hpp"
#include "engine/models/script_archive.hpp"
#include "engine/models/script_random_ops.hpp"

namespace drift {
namespace {

// LibTorch's errors run over many lines with a backtrace; a refusal gives one. An error raised
// inside a module's code ends with the error itself ("RuntimeError: mat1 and mat2 shapes ...")
// after the TorchScript traceback: that line says what went wrong.
std::string first_line(const std::exception& e) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
  text.erase(0, std::min(text.size(), text.find_first_not_of(" \t\n")));  // the importer's start with a newline
  if (const auto error = text.rfind("Error: "); error != std::string::npos && text.find('\n') < error) {
    const auto start = text.rfind('\n', error);
    text = text.substr(start == std::string::npos ? 0 : start + 1);
  }
  if (const auto end = text.find('\n'); end != std::string::npos) text.resize(end);
  return text;
}

const ModelFileKind kScriptFile{"a TorchScript module", "torch.jit.save"};

std::string read_bytes(const std::string& path) { return read_model_file(path, kScriptFile); }

std::string digest_of(const std::string& bytes) { return model_file_digest(bytes); }

std::string module_bytes(const std::string& path, const std::string& digest) {
  return model_file_bytes(path, digest, kScriptFile);
}

// A valid archive LibTorch could not read: most often a module saved by a newer PyTorch that
// calls an op (or an op's newer form) this LibTorch lacks. Says which, and what to do.
std::string unreadable_module_message(const std::string& name, const std::string& error,
                                      const std::string& format_version) {
  const auto libtorch = "LibTorch " + torch_version();
  static const std::regex op_pattern(R"(\b(aten|prim|quantized|torch|ops)::[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)?)");
  std::string text;
  if (std::smatch op; std::regex_search(error, op, op_pattern))
    text = name + ": this TorchScript module calls " + op.str() + ", which " + libtorch +
           " (the one this drift was built with) does not have in that form (\"" + error + "\")";
  else
    text = name + ": " + libtorch + ", which this drift was built with, cannot read this TorchScript module (\"" +
           error + "\")";
  if (!format_version.empty())
    text += "; the file records format version " + format_version + ", and this LibTorch reads versions " +
            std::to_string(caffe2::serialize::kMinSupportedFileFormatVersion) + " to " +
            std::to_string(caffe2::serialize::kMaxSupportedFileFormatVersion);
  return text + ". If a newer PyTorch saved it, save it with PyTorch " + torch_version() +
         " (python3-torch of the same Debian release), or use a drift built against a newer LibTorch "
         "(docs/install.md#your-own-libtorch)";
}

torch::jit::Module load_module(const std::string& bytes, const std::string& name) {
  // torch.jit.save writes a zip archive; anything else gets a plainer word than the reader's.
  if (bytes.size() < 4 || bytes.compare(0, 4, "PK\x03\x04") != 0)
    throw UserError(name +
                    ": not a TorchScript module (torch.jit.save writes a zip archive, and this file is not one)");
  const auto format_version = check_script_archive(bytes, name);
  std::istringstream in(bytes);
  torch::jit::Module module;
  try {
    module = torch::jit::load(in, torch::Device(torch::kCPU));
  } catch (const std::exception& e) {
    throw UserError(unreadable_module_message(name, first_line(e), format_version));
  }
  return module;
}

// A method `name` that takes one argument besides self; UserError naming what is missing.
void require_method(const torch::jit::Module& module, const std::string& name, const std::string& file,
                    const std::string& why) {
  const auto method = module.find_method(name);
  if (!method)
    throw UserError("model.file " + file + ": the module has no method " + name + "(x) " + why +
                    " (docs/torchscript.md)");
  if (method->function().getSchema().arguments().size() != 2)
    throw UserError("model.file " + file + ": " + name + " takes " +
                    std::to_string(method->function().getSchema().arguments().size() - 1) +
                    " arguments; drift calls it with one batch x");
}

// Calls `method` on x with the graph executor's optimisations off: the module then runs as
// eager code, op by op, with the same kernels and bits on every run (no fusion, no profiling).
torch::Tensor call(torch::jit::Module& module, const std::string& method, const torch::Tensor& x,
                   const std::string& file) {
  torch::jit::GraphOptimizerEnabledGuard plain(false);
  auto result = module.get_method(method)({x});
  if (!result.isTensor())
    throw UserError("model.file " + file + ": " + method + "(x) returned " + result.tagKind() +
                    ", not one tensor (docs/torchscript.md)");
  return result.toTensor();
}

std::string shape_text(const torch::Tensor& t) {
  std::string text = "[";
  for (std::int64_t d = 0; d < t.dim(); ++d) text += (d > 0 ? ", " : "") + std::to_string(t.size(d));
  return text + "]";
}

// Refuses a module whose `method` draws random numbers (dropout, say): LibTorch draws them from
// its process-wide generator, which slots share in whatever order they run, so a run would not
// repeat, and drift cannot hand the module its keyed streams.
void refuse_random_ops(const torch::jit::Module& module, const std::string& method, const std::string& file) {
  if (const auto op = random_op_in(module, method); !op.empty())
    throw UserError("model.file " + file + ": " + method + "(x) draws random numbers (" + op +
                    "); drift cannot give them its seeded streams, so runs would not repeat: remove it "
                    "(docs/torchscript.md#how-it-runs)");
}

// A batch of two zero samples, in float32 as every dataset holds them (text as token indices).
torch::Tensor probe_batch(const std::vector<std::int64_t>& input_shape) {
  std::vector<std::int64_t> shape{2};
  shape.insert(shape.end(), input_shape.begin(), input_shape.end());
  return torch::zeros(shape, torch::kFloat32);
}

class ScriptModel final : public Model {
 public:
  ScriptModel(torch::jit::Module module, std::vector<std::int64_t> input_shape, std::int64_t num_classes,
              const ModelOptions& options);

  ModelOutput forward(const torch::Tensor& x) override;
  void train(bool on = true) override {
    Model::train(on);
    module_.train(on);
  }

 protected:
  Extracted extract(const torch::Tensor& x, bool levels) override;

 private:
  // The feature width, and the tensors features(x) reaches (the layers after it are not drift's).
  std::int64_t probe_features(const torch::Tensor& probe, std::set<const void*>& reached);
  void check_logits(const torch::Tensor& probe, std::int64_t num_classes);
  bool mirror(torch::nn::Module& into, const torch::jit::Module& from, const std::set<const void*>* reached,
              const std::string& layer_name);

  torch::jit::Module module_;
  std::string file_;
  bool backbone_ = false;
};

ScriptModel::ScriptModel(torch::jit::Module module, std::vector<std::int64_t> input_shape, std::int64_t num_classes,
                         const ModelOptions& options)
    : module_(std::move(module)), file_(options.script_file), backbone_(script_backbone(options)) {
  const auto probe = probe_batch(input_shape);
  const auto layer_name = options.script_weights ? std::string("ScriptFileLayer") : std::string(kDrawnScriptLayer);
  module_.eval();
  refuse_random_ops(module_, backbone_ ? "features" : "forward", file_);
  try {
    if (!backbone_) {
      check_logits(probe, num_classes);
      mirror(*this, module_, nullptr, layer_name);
      bool trainable = false;
      for (const auto& p : parameters()) trainable = trainable || p.requires_grad();
      if (!trainable)
        throw UserError("model.file " + file_ +
                        ": the module has no trainable parameters, so no client could ever change it");
    } else {
      std::set<const void*> reached;
      const auto dim = probe_features(probe, reached);
      mirror(*this, module_, &reached, layer_name);
      for (const char* name : {"head", "projection"})
        if (named_children().contains(name))
          throw UserError("model.file " + file_ + ": the module's own layer '" + name +
                          "' is read by features(x), and drift puts its head there: rename the layer");
      build_head(dim, num_classes, options);
    }
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    throw UserError("model.file " + file_ + ": the module fails on a batch of the dataset's shape (" + first_line(e) +
                    ")");
  }
  module_.train(true);
}

void ScriptModel::check_logits(const torch::Tensor& probe, std::int64_t num_classes) {
  torch::NoGradGuard no_grad;
  const auto logits = call(module_, "forward", probe, file_);
  if (!logits.is_floating_point())
    throw UserError("model.file " + file_ + ": forward(x) gives " + std::string(c10::toString(logits.scalar_type())) +
                    " logits; they must be floating point (float32), as the loss and the evaluation read them");
  if (logits.dim() != 2 || logits.size(0) != probe.size(0) || logits.size(1) != num_classes)
    throw UserError("model.file " + file_ + ": forward(x) gives " + shape_text(logits) + " for a batch of " +
                    shape_text(probe) + "; the dataset has " + std::to_string(num_classes) +
                    " classes, so it must give [" + std::to_string(probe.size(0)) + ", " + std::to_string(num_classes) +
                    "]");
}

std::int64_t ScriptModel::probe_features(const torch::Tensor& probe, std::set<const void*>& reached) {
  const auto features = call(module_, "features", probe, file_);
  if (!features.is_floating_point())
    throw UserError("model.file " + file_ + ": features(x) gives " +
                    std::string(c10::toString(features.scalar_type())) + " features; they must be floating point");
  if (features.dim() != 2 || features.size(0) != probe.size(0) || features.size(1) < 1)
    throw UserError("model.file " + file_ + ": features(x) gives " + shape_text(features) + " for a batch of " +
                    shape_text(probe) + "; it must give [" + std::to_string(probe.size(0)) + ", d]");
  if (features.requires_grad()) features.sum().backward();
  for (const auto& p : module_.parameters(/*recurse=*/true)) {
    if (p.grad().defined()) reached.insert(p.unsafeGetTensorImpl());
    p.mutable_grad() = torch::Tensor();
  }
  return features.size(1);
}

// Registers the module's tensors under their own dotted names, one plain module per
// submodule, so drift's optimiser, state and device moves reach the very tensors the module
// computes with. With `reached`, only the parameters features(x) reaches (and every buffer).
// Returns whether anything was registered.
bool ScriptModel::mirror(torch::nn::Module& into, const torch::jit::Module& from, const std::set<const void*>* reached,
                         const std::string& layer_name) {
  bool any = false;
  for (const auto& p : from.named_parameters(/*recurse=*/false)) {
    if (reached != nullptr && reached->count(p.value.unsafeGetTensorImpl()) == 0) continue;
    into.register_parameter(p.name, p.value, p.value.requires_grad());
    any = true;
  }
  for (const auto& b : from.named_buffers(/*recurse=*/false)) {
    into.register_buffer(b.name, b.value);
    any = true;
  }
  for (const auto& child : from.named_children()) {
    auto layer = std::make_shared<torch::nn::Module>(layer_name);
    if (mirror(*layer, child.value, reached, layer_name)) {
      into.register_module(child.name, layer);
      any = true;
    }
  }
  return any;
}

ModelOutput ScriptModel::forward(const torch::Tensor& x) {
  if (backbone_) return Model::forward(x);
  ModelOutput out;
  out.logits = call(module_, "forward", x, file_);
  return out;
}

Extracted ScriptModel::extract(const torch::Tensor& x, bool /*levels*/) {
  Extracted out;
  out.features = call(module_, "features", x, file_);
  return out;
}

}  // namespace

bool script_backbone(const ModelOptions& options) {
  return options.script_backbone || options.projection_dim > 0 || options.head != HeadKind::linear ||
         options.feature_dim > 0;
}

ScriptModuleInfo inspect_script_bytes(const std::string& bytes, const std::string& name) {
  auto module = load_module(bytes, name);
  require_method(module, "forward", name, "that gives the logits");
  ScriptModuleInfo info;
  info.digest = digest_of(bytes);
  if (module.find_method("features")) {
    require_method(module, "features", name, "");
    info.has_features = true;
  }
  return info;
}

ScriptModuleInfo inspect_script_module(const std::string& path) {
  const auto bytes = read_bytes(path);
  check_model_file_apart(path, digest_of(bytes));
  return inspect_script_bytes(bytes, path);
}

std::shared_ptr<Model> make_script_model(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
                                         const ModelOptions& options) {
  if (options.script_file.empty()) throw UserError("model 'torchscript' needs model.file (a torch.jit.save file)");
  if (options.feature_levels)
    throw UserError("model.file " + options.script_file +
                    ": the algorithm reads every stage's pooled output, which a TorchScript module does not give");
  const auto& bytes = module_bytes(options.script_file, options.script_digest);
  check_model_file_apart(options.script_file, options.script_digest.empty() ? digest_of(bytes) : options.script_digest,
                         input_shape, num_classes, script_backbone(options));
  auto module = load_module(bytes, options.script_file);
  require_method(module, script_backbone(options) ? "features" : "forward", options.script_file,
                 script_backbone(options) ? "that gives the features the algorithm reads" : "that gives the logits");
  return std::make_shared<ScriptModel>(std::move(module), input_shape, num_classes, options);
}

}  // namespace drift
