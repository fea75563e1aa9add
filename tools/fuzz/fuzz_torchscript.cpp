// Model files a person names in model.file: the bytes go through the loader as validation reads
// them (zip archive, pickled tensors, TorchScript source) and, when they load, the module is
// built as a drift model and called on a probe batch, as a run does before it trains.
#include "engine/models/model.hpp"
#include "engine/models/torchscript_model.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return drift::fuzz::read_as_file(data, size, ".pt", [](const std::string& path) {
    const auto info = drift::inspect_script_module(path);
    drift::ModelOptions options;
    options.script_file = path;
    options.script_digest = info.digest;
    options.script_weights = false;
    options.script_backbone = info.has_features;
    drift::make_model("torchscript", {1, 2, 2}, 2, 1, options);
  });
}
