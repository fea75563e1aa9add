// Programs torch.export wrote, as model.file names them (docs/models.md#hostile-files). drift's
// own reader runs on every input in this process: the archive's records, the graph's JSON bound
// to this LibTorch's ops, the state dict's unpickler. An input it accepts is then built into a
// model and run on a probe batch in a child process first, as drift's isolated check does: a
// graph chooses the arguments LibTorch's kernels get, and a kernel that crashes on them is
// LibTorch's to fix, refused by the check in a run. Only what the child got through is built
// here; a crash, a leak or an unexpected exception in this process is a finding.
#include <sanitizer/common_interface_defs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "engine/models/exported_model.hpp"
#include "engine/models/model.hpp"
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

// How the child ended: got through (0), refused the file (2), met an exception a refusal is
// not (3, built again here so that the fuzzer reports it), or crashed or hung (anything else).
int build_in_child(const std::string& path) {
  const pid_t pid = fork();
  if (pid == 0) {
    __sanitizer_set_death_callback(nullptr);
    for (const int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGALRM, SIGINT, SIGTERM, SIGXFSZ})
      std::signal(sig, SIG_DFL);
    std::freopen("/dev/null", "w", stderr);
    alarm(10);
    try {
      build_model(path);
    } catch (const drift::UserError&) {
      _exit(2);
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One thread: a child forked from a process whose OpenMP team exists waits for threads it
  // does not have (libgomp), and the probes are small.
  static const bool one_thread = (at::set_num_threads(1), true);
  (void)one_thread;
  return drift::fuzz::read_as_file(data, size, ".pt2", [&](const std::string& path) {
    drift::inspect_exported_bytes(std::string(reinterpret_cast<const char*>(data), size), path);
    if (const int end = build_in_child(path); end == 0 || end == 3) build_model(path);
  });
}
