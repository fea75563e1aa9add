#include "engine/models/exported_model.hpp"

#include <map>
#include <mutex>
#include <set>

#include "engine/core/error.hpp"
#include "engine/models/exported_graph.hpp"
#include "engine/models/model_file.hpp"
#include "engine/models/state_pickle.hpp"
#include "engine/models/torchscript_model.hpp"
#include "engine/models/zip_archive.hpp"

namespace drift {
namespace {

const ModelFileKind kExportedFile{"an exported program", "torch.export.save"};
constexpr const char* kProgramRecord = "serialized_exported_program.json";

// What an archive of torch.export.save holds: the graph, the parameters and buffers, the
// constants. Shared, read-only, by every model built from the same bytes.
struct ProgramFile {
  ExportedGraph graph;
  std::map<std::string, StateEntry> state;      // parameters and buffers by name
  std::map<std::string, StateEntry> constants;  // lifted tensor constants by name
};

std::map<std::string, StateEntry> by_name(std::vector<StateEntry> entries) {
  std::map<std::string, StateEntry> out;
  for (auto& e : entries) out[e.name] = std::move(e);
  return out;
}

const ZipRecord* find_record(const std::vector<ZipRecord>& records, const std::string& name) {
  for (const auto& r : records)
    if (r.name == name) return &r;
  return nullptr;
}

// The archive's records, with a plain word for the files that are some other archive.
ProgramFile read_program(const std::string& bytes, const std::string& name) {
  const ArchiveRefusal refuse(name, kExportedFile.what, kExportedFile.writer);
  if (bytes.size() < 4 || bytes.compare(0, 4, "PK\x03\x04") != 0) refuse.not_zip();
  const auto records = zip_records(bytes, refuse);
  const auto* json = find_record(records, kProgramRecord);
  if (json == nullptr) {
    for (const auto& r : records) {
      if (r.name == "archive_format" || r.name.find("/archive_format") != std::string::npos)
        throw UserError(name +
                        ": an archive in the PT2 package layout of PyTorch 2.7 or later; drift reads what "
                        "torch.export.save of PyTorch 2.6 writes (docs/models.md#versions)");
      if (r.name.size() > 9 && r.name.compare(r.name.size() - 9, 9, "/data.pkl") == 0)
        throw UserError(name +
                        ": a TorchScript module or torch.save file, not an exported program; for a "
                        "torch.jit.save file use model \"torchscript\" (docs/models.md)");
    }
    refuse(std::string("no ") + kProgramRecord + " record");
  }
  ProgramFile program;
  program.graph = read_exported_graph(record_bytes(bytes, *json, std::uint64_t{64} << 20, refuse), name);
  if (const auto* state = find_record(records, "serialized_state_dict.pt"))
    program.state = by_name(read_state_dict(record_bytes(bytes, *state, bytes.size(), refuse), refuse));
  if (const auto* constants = find_record(records, "serialized_constants.pt"))
    program.constants = by_name(read_state_dict(record_bytes(bytes, *constants, bytes.size(), refuse), refuse));
  for (const auto& input : program.graph.inputs) {
    const auto& table = input.kind == GraphInput::Kind::constant ? program.constants : program.state;
    if (input.kind != GraphInput::Kind::batch && table.count(input.name) == 0)
      throw UserError(name + ": the program reads '" + input.name + "', which its archive does not hold");
  }
  return program;
}

// Programs by the digest of their bytes: every client's model of a run is built from one read.
std::shared_ptr<const ProgramFile> program_of(const std::string& bytes, const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const ProgramFile>> programs;
  const auto digest = model_file_digest(bytes);
  std::lock_guard<std::mutex> lock(mutex);
  if (programs.size() >= 8 && programs.count(digest) == 0) programs.clear();  // a run reads one file
  auto& program = programs[digest];
  if (!program) program = std::make_shared<const ProgramFile>(read_program(bytes, name));
  return program;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t d = 0; d < shape.size(); ++d)
    text += (d > 0 ? ", " : "") + (shape[d] < 0 ? std::string("any") : std::to_string(shape[d]));
  return text + "]";
}

std::vector<std::int64_t> sizes_of(const at::Tensor& t) { return t.sizes().vec(); }

// drift feeds batches of every size up to training.batch_size (an epoch's last batch is what is
// left), which a graph traced for one batch size does not promise to compute.
void require_dynamic_batch(const ExportedGraph& graph, const std::string& name) {
  if (graph.batch_min == graph.batch_max)
    throw UserError(name + ": the program was exported for batches of exactly " + std::to_string(graph.batch_max) +
                    " samples; drift feeds batches of any size up to training.batch_size: export with dynamic_shapes="
                    "{\"x\": {0: torch.export.Dim(\"batch\")}} (docs/models.md#exporting)");
}

class ExportedModel final : public Model {
 public:
  ExportedModel(std::shared_ptr<const ProgramFile> program, const std::vector<std::int64_t>& input_shape,
                std::int64_t num_classes, const ModelOptions& options);
  ModelOutput forward(const torch::Tensor& x) override;

 protected:
  Extracted extract(const torch::Tensor& x, bool levels) override;

 private:
  std::vector<at::Tensor> run(const at::Tensor& x, const std::vector<bool>* needed);
  void check_batch_shape(const std::vector<std::int64_t>& input_shape) const;
  void check_logits(const at::Tensor& probe, std::int64_t num_classes);
  std::set<std::string> probe_features(const at::Tensor& probe);
  void register_tensors(const std::set<std::string>* reached, const std::string& layer_name);
  [[noreturn]] void refuse(const std::string& why) const { throw UserError("model.file " + file_ + ": " + why); }

  std::shared_ptr<const ProgramFile> program_;
  std::map<std::string, at::Tensor> tensors_;      // the model's own copies of the parameters and buffers
  std::vector<std::pair<int, at::Tensor>> bound_;  // graph slot, tensor
  std::vector<std::pair<int, at::Tensor>> constants_;
  std::vector<std::pair<int, at::Tensor>> updates_;  // slot of a buffer's new value, the buffer
  std::vector<bool> features_only_;
  std::string file_;
  bool backbone_ = false;
};

ExportedModel::ExportedModel(std::shared_ptr<const ProgramFile> program, const std::vector<std::int64_t>& input_shape,
                             std::int64_t num_classes, const ModelOptions& options)
    : program_(std::move(program)), file_(options.script_file), backbone_(script_backbone(options)) {
  const auto& graph = program_->graph;
  require_dynamic_batch(graph, "model.file " + file_);
  check_batch_shape(input_shape);
  for (const auto& [name, entry] : program_->state) {
    auto copy = entry.tensor.detach().clone();
    copy.set_requires_grad(entry.tensor.requires_grad());
    tensors_[name] = copy;
  }
  for (const auto& input : graph.inputs) {
    if (input.kind == GraphInput::Kind::parameter || input.kind == GraphInput::Kind::buffer)
      bound_.emplace_back(input.slot, tensors_.at(input.name));
    else if (input.kind == GraphInput::Kind::constant)
      constants_.emplace_back(input.slot, program_->constants.at(input.name).tensor);
  }
  for (const auto& [name, slot] : graph.buffer_updates) {
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) refuse("the program updates a buffer '" + name + "' it does not hold");
    updates_.emplace_back(slot, it->second);
  }
  std::vector<std::int64_t> shape{2};
  shape.insert(shape.end(), input_shape.begin(), input_shape.end());
  const auto probe = torch::zeros(shape, torch::kFloat32);
  const auto layer_name = options.script_weights ? std::string("ScriptFileLayer") : std::string(kDrawnScriptLayer);
  try {
    if (!backbone_) {
      check_logits(probe, num_classes);
      register_tensors(nullptr, layer_name);
    } else {
      if (graph.user_outputs.size() < 2)
        refuse(
            "the algorithm reads the model's features, and forward(x) gives only the logits: return "
            "(logits, features) (docs/models.md#features)");
      features_only_ = nodes_needed_for(graph, 1);
      const auto reached = probe_features(probe);
      register_tensors(&reached, layer_name);
      for (const char* name : {"head", "projection"})
        if (named_children().contains(name))
          refuse(std::string("the program's own layer '") + name +
                 "' computes the features, and drift puts its head there: rename the layer");
      build_head(run(probe, &features_only_)[1].size(1), num_classes, options);
    }
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    std::string text = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
    if (const auto end = text.find('\n'); end != std::string::npos) text.resize(end);
    refuse("the program fails on a batch of the dataset's shape (" + text + ")");
  }
  bool trainable = false;
  for (const auto& p : parameters()) trainable = trainable || p.requires_grad();
  if (!trainable) refuse("the program has no trainable parameters, so no client could ever change it");
}

void ExportedModel::check_batch_shape(const std::vector<std::int64_t>& input_shape) const {
  const auto& graph = program_->graph;
  bool fits = graph.sample_shape.size() == input_shape.size();
  for (std::size_t d = 0; fits && d < input_shape.size(); ++d)
    fits = graph.sample_shape[d] < 0 || graph.sample_shape[d] == input_shape[d];
  if (!fits)
    refuse("the program was exported for samples of " + shape_text(graph.sample_shape) + ", and the dataset's are " +
           shape_text(input_shape));
}

std::vector<at::Tensor> ExportedModel::run(const at::Tensor& x, const std::vector<bool>* needed) {
  const auto& graph = program_->graph;
  std::vector<c10::IValue> env(static_cast<std::size_t>(graph.slots));
  for (const auto& [slot, tensor] : bound_) env[slot] = tensor;
  for (const auto& [slot, tensor] : constants_) env[slot] = tensor.to(x.device());
  env[graph.batch_slot] = x;
  const bool training = is_training();
  auto outputs = run_exported_graph(graph, env, training, needed);
  // A functional graph (run_decompositions) returns the buffers' new values. They replace the
  // buffers' data rather than being copied in: the ops saved the old buffers for their backward,
  // which an in-place write would fail (autograd's version check), and read them only in eval.
  if (training && !updates_.empty()) {
    torch::NoGradGuard no_grad;
    for (auto& [slot, buffer] : updates_) buffer.set_data(env[slot].toTensor().detach());
  }
  return outputs;
}

std::string shape_of(const at::Tensor& t) { return shape_text(sizes_of(t)); }

void ExportedModel::check_logits(const at::Tensor& probe, std::int64_t num_classes) {
  torch::NoGradGuard no_grad;
  eval();  // a probe must not move BatchNorm's running statistics
  const auto outputs = run(probe, nullptr);
  train();
  const auto& logits = outputs[0];
  if (!logits.is_floating_point())
    refuse("forward(x) gives " + std::string(c10::toString(logits.scalar_type())) +
           " logits; they must be floating point (float32), as the loss and the evaluation read them");
  if (logits.dim() != 2 || logits.size(0) != probe.size(0) || logits.size(1) != num_classes)
    refuse("forward(x) gives logits of " + shape_of(logits) + " for a batch of " + shape_of(probe) +
           "; the dataset has " + std::to_string(num_classes) + " classes, so they must be [" +
           std::to_string(probe.size(0)) + ", " + std::to_string(num_classes) + "]");
  if (outputs.size() > 1 &&
      (!outputs[1].is_floating_point() || outputs[1].dim() != 2 || outputs[1].size(0) != probe.size(0)))
    refuse("forward(x) gives features of " + shape_of(outputs[1]) + " for a batch of " + shape_of(probe) +
           "; they must be floating point, [" + std::to_string(probe.size(0)) + ", d] (docs/models.md#features)");
}

// The names of the parameters the features reach: those drift trains under its own head.
std::set<std::string> ExportedModel::probe_features(const at::Tensor& probe) {
  eval();
  const auto features = run(probe, &features_only_)[1];
  train();
  if (!features.is_floating_point() || features.dim() != 2 || features.size(0) != probe.size(0) || features.size(1) < 1)
    refuse("forward(x) gives features of " + shape_of(features) + " for a batch of " + shape_of(probe) +
           "; they must be floating point, [" + std::to_string(probe.size(0)) + ", d] (docs/models.md#features)");
  if (features.requires_grad()) features.sum().backward();
  std::set<std::string> reached;
  for (auto& [name, tensor] : tensors_) {
    if (tensor.grad().defined()) reached.insert(name);
    if (tensor.requires_grad()) tensor.mutable_grad() = at::Tensor();
  }
  return reached;
}

// Registers the parameters and buffers under their dotted names, one plain module per prefix, in
// the program's order, so drift's optimiser, state and device moves reach the very tensors the
// graph reads. With `reached`, only the parameters the features reach (and every buffer).
void ExportedModel::register_tensors(const std::set<std::string>* reached, const std::string& layer_name) {
  std::map<std::string, std::shared_ptr<torch::nn::Module>> layers;
  for (const auto& input : program_->graph.inputs) {
    const bool parameter = input.kind == GraphInput::Kind::parameter;
    if (!parameter && input.kind != GraphInput::Kind::buffer) continue;
    if (parameter && reached != nullptr && reached->count(input.name) == 0) continue;
    torch::nn::Module* into = this;
    std::string prefix;
    auto rest = input.name;
    for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
      const auto part = rest.substr(0, dot);
      prefix += part + ".";
      auto& layer = layers[prefix];
      if (!layer) layer = into->register_module(part, std::make_shared<torch::nn::Module>(layer_name));
      into = layer.get();
      rest = rest.substr(dot + 1);
    }
    auto& tensor = tensors_.at(input.name);
    if (parameter)
      into->register_parameter(rest, tensor, tensor.requires_grad());
    else
      into->register_buffer(rest, tensor);
  }
}

ModelOutput ExportedModel::forward(const torch::Tensor& x) {
  if (backbone_) return Model::forward(x);
  auto outputs = run(x, nullptr);
  ModelOutput out;
  out.logits = outputs[0];
  if (outputs.size() > 1) out.features = outputs[1];
  return out;
}

Extracted ExportedModel::extract(const torch::Tensor& x, bool /*levels*/) {
  Extracted out;
  out.features = run(x, &features_only_)[1];
  return out;
}

}  // namespace

bool is_exported_archive(const std::string& bytes) {
  try {
    const ArchiveRefusal refuse("", kExportedFile.what, kExportedFile.writer);
    return find_record(zip_records(bytes, refuse), kProgramRecord) != nullptr;
  } catch (const UserError&) {
    return false;
  }
}

ModelFileInfo inspect_exported_bytes(const std::string& bytes, const std::string& name) {
  const auto program = program_of(bytes, name);
  require_dynamic_batch(program->graph, name);
  ModelFileInfo info;
  info.digest = model_file_digest(bytes);
  info.has_features = program->graph.user_outputs.size() > 1;
  info.batch_min = program->graph.batch_min;
  info.batch_max = program->graph.batch_max;
  return info;
}

ModelFileInfo inspect_exported_program(const std::string& path) {
  const auto bytes = read_model_file(path, kExportedFile);
  check_model_file_apart(path, model_file_digest(bytes));
  return inspect_exported_bytes(bytes, path);
}

std::shared_ptr<Model> make_exported_model(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
                                           const ModelOptions& options) {
  if (options.script_file.empty()) throw UserError("model 'exported' needs model.file (a torch.export.save file)");
  if (options.feature_levels)
    throw UserError("model.file " + options.script_file +
                    ": the algorithm reads every stage's pooled output, which an exported program does not give");
  const auto bytes = model_file_bytes(options.script_file, options.script_digest, kExportedFile);
  check_model_file_apart(options.script_file,
                         options.script_digest.empty() ? model_file_digest(bytes) : options.script_digest, input_shape,
                         num_classes, script_backbone(options));
  return std::make_shared<ExportedModel>(program_of(bytes, options.script_file), input_shape, num_classes, options);
}

}  // namespace drift
