#pragma once
// A model read from a TorchScript file (torch.jit.save of a scripted or traced module), so a
// researcher brings their own network without touching drift. The convention a module follows
// and what drift does with it are in docs/torchscript.md.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/models/model.hpp"

namespace drift {

// What a module file offers (has_features: a features(x) method beside forward(x)).
using ScriptModuleInfo = ModelFileInfo;

// Reads `path` and checks that it holds a TorchScript module with a forward method. Throws
// UserError with one line for a missing, truncated, malformed or foreign file.
ScriptModuleInfo inspect_script_module(const std::string& path);

// The same checks on bytes in memory (the fuzz target's entry; `name` labels the errors).
ScriptModuleInfo inspect_script_bytes(const std::string& bytes, const std::string& name);

// Whether `options` make drift read the module's features(x) and put its own head on them
// (ModelOptions::script_backbone, or a head the algorithm shapes) instead of calling forward(x).
bool script_backbone(const ModelOptions& options);

// The module of options.script_file as a drift Model for inputs of one sample's `input_shape`
// ({C, H, W}, or {L} for token sequences). Refuses a file whose digest is not
// options.script_digest, and a module whose output does not have `num_classes` columns, with
// one line. Its layers are not initialised here: make_model draws them when
// options.script_weights is false.
std::shared_ptr<Model> make_script_model(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
                                         const ModelOptions& options);

// The name init_parameters recognises on the layers of a module whose weights it draws.
inline constexpr const char* kDrawnScriptLayer = "ScriptLayer";

}  // namespace drift
