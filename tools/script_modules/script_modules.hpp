#pragma once
// TorchScript modules written from C++ (their source compiled by LibTorch), so that the tests,
// the fuzz seeds and `make bench` can make the files a user would export from Python without
// needing Python. The layout follows docs/examples/torchscript/export_small_cnn.py.
#include <torch/script.h>

#include <cstdint>
#include <string>

namespace drift::script_modules {

struct SmallCnnShape {
  std::int64_t channels = 1;
  std::int64_t side = 28;
  std::int64_t classes = 10;
  bool features = true;  // export features(x) beside forward(x)
};

// drift's small-cnn as a TorchScript module: conv1, conv2, fc and head, in that order and with
// those names, so drift draws the same initial weights for it as for the built-in model.
torch::jit::Module small_cnn(const SmallCnnShape& shape);

// A linear classifier over flattened inputs, a few kilobytes saved (fuzz seeds).
torch::jit::Module tiny_linear(std::int64_t inputs, std::int64_t classes);

// tiny_linear whose forward never returns (the tests of the isolated check).
torch::jit::Module endless_linear(std::int64_t inputs, std::int64_t classes);

// tiny_linear with one flaw drift must refuse: "dropout" (in a submodule, as nn.Dropout would
// be), "int-logits" (forward returns int64) or "frozen" (no parameter is trainable).
torch::jit::Module flawed_linear(std::int64_t inputs, std::int64_t classes, const std::string& flaw);

}  // namespace drift::script_modules
