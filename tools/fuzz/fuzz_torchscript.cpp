// Model files a person names in model.file, read as a run reads them. drift's own archive check
// runs here on every input. Then, as drift's isolated check does (engine/core/isolated_check.hpp),
// a child process reads the file, builds the model and calls it on a probe batch: LibTorch 1.13's
// TorchScript importer crashes on some malformed module code, and such a crash, or a hang,
// refuses the file. Only a file the child got through is read in this process, as a run then
// reads it; a crash, a leak or an unexpected exception here is a finding.
#include <sanitizer/common_interface_defs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "engine/models/model.hpp"
#include "engine/models/script_archive.hpp"
#include "engine/models/torchscript_model.hpp"
#include "fuzz_input.hpp"

namespace {

void read_model(const std::string& path) {
  const auto info = drift::inspect_script_module(path);
  drift::ModelOptions options;
  options.script_file = path;
  options.script_digest = info.digest;
  options.script_weights = false;
  options.script_backbone = info.has_features;
  drift::make_model("torchscript", {1, 2, 2}, 2, 1, options);
}

// How the child ended: got through (0), refused the file (2), met an exception a refusal is
// not (3, read again here so that the fuzzer reports it), or crashed or hung (anything else).
int read_in_child(const std::string& path) {
  const pid_t pid = fork();
  if (pid == 0) {
    // The child's crash is the refusal, not a finding: no report, no artifact from libFuzzer.
    __sanitizer_set_death_callback(nullptr);
    for (const int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGALRM, SIGINT, SIGTERM, SIGXFSZ})
      std::signal(sig, SIG_DFL);
    std::freopen("/dev/null", "w", stderr);
    alarm(10);
    try {
      read_model(path);
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
  return drift::fuzz::read_as_file(data, size, ".pt", [&](const std::string& path) {
    drift::check_script_archive(std::string(reinterpret_cast<const char*>(data), size), path);
    if (const int end = read_in_child(path); end == 0 || end == 3) read_model(path);
  });
}
