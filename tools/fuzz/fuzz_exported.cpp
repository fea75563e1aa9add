// Programs torch.export wrote, as model.file names them (docs/models.md#hostile-files). drift's
// own reader runs on every input in this process: the archive's records, the graph's JSON bound
// to this LibTorch's ops, the state dict's unpickler. An input it accepts is then built into a
// model and run on a probe batch in a child process first, as drift's isolated check does: a
// graph chooses the arguments LibTorch's kernels get, and a kernel that crashes on them is
// LibTorch's to fix, refused by the check in a run. Only what the child got through is built
// here; a crash, a leak or an unexpected exception in this process is a finding.
#include "engine/models/exported_model.hpp"
#include "engine/models/model.hpp"
#include "fuzz_child.hpp"
#include "fuzz_input.hpp"

namespace {

void build_model(const std::string& path) {
  const auto info = drift::inspect_exported_program(path);
  drift::ModelOptions options;
  options.script_file = path;
  options.script_digest = info.digest;
  options.script_weights = false;
  options.script_backbone = info.has_features;
  const auto model = drift::make_model("exported", {1, 28, 28}, 10, 1, options);
  const auto out = model->forward(torch::zeros({3, 1, 28, 28}));
  out.logits.sum().backward();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One thread: a child forked from a process whose OpenMP team exists waits for threads it
  // does not have (libgomp), and the probes are small.
  static const bool one_thread = (at::set_num_threads(1), true);
  (void)one_thread;
  return drift::fuzz::read_as_file(data, size, ".pt2", [&](const std::string& path) {
    drift::inspect_exported_bytes(std::string(reinterpret_cast<const char*>(data), size), path);
    if (const int end = drift::fuzz::read_in_child(path, build_model); end == 0 || end == 3) build_model(path);
  });
}
