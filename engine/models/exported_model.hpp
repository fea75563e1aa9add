#pragma once
// A model read from a program torch.export wrote (torch.export.save, a .pt2 file): PyTorch's
// successor to TorchScript. drift reads the graph and the weights itself and runs the graph's
// ATen ops through LibTorch's dispatcher with autograd on, so the program trains in C++ like any
// drift model. The convention a program follows and what drift does with it: docs/models.md.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/models/model.hpp"

namespace drift {

// Reads `path` (in a separate process first, as every model file) and checks that it holds an
// exported program drift can train. Throws UserError with one line otherwise.
ModelFileInfo inspect_exported_program(const std::string& path);

// The same checks on bytes in memory (the fuzz target's entry; `name` labels the errors).
ModelFileInfo inspect_exported_bytes(const std::string& bytes, const std::string& name);

// Whether `bytes` are an archive torch.export.save wrote (it holds the program's JSON), so that
// `drift check-model` reads either kind of file.
bool is_exported_archive(const std::string& bytes);

// The program of options.script_file as a drift Model for inputs of one sample's `input_shape`.
// Its forward gives the logits, or (logits, features); with script_backbone(options) drift reads
// the features and puts its own head on them. Refuses, with one line, a file whose digest is not
// options.script_digest and a program whose outputs do not fit `num_classes`.
std::shared_ptr<Model> make_exported_model(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
                                           const ModelOptions& options);

}  // namespace drift
