#pragma once
// Some files are read by parsers drift does not own and cannot make safe: LibTorch 1.13's
// TorchScript importer crashes on some malformed module code, and a module's own code (its
// __setstate__, its forward) may never return. Before drift reads such a file, it asks a
// checker to read it in a separate process, so that a crash or a hang there refuses the file
// with one line instead of taking the run down (docs/torchscript.md#hostile-files).
//
// The engine says what to check; the program installs how. drift's CLI runs a copy of itself
// with limits on time and memory. Without a checker (unit tests, the fuzz targets) the file
// is read in this process only.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace drift {

struct IsolatedCheck {
  enum class Kind {
    model,     // a TorchScript model file: read it, find forward (and features)
    generator  // a latent generator folder: load and probe its modules
  };
  Kind kind = Kind::model;
  std::string path;
  // model: the digest of the bytes this process read (StreamHash hex); the checker refuses a
  // file that no longer has it, so what was checked is what is read here.
  std::string digest;
  // model: also run the module on a probe batch of samples of this shape (empty: read only),
  // calling features(x) when `features`, else forward(x) and expecting `num_classes` logits.
  std::vector<std::int64_t> input_shape;
  std::int64_t num_classes = 0;
  bool features = false;
};

// Throws UserError (one line) when the file is refused; returns when it may be read here.
using IsolatedChecker = std::function<void(const IsolatedCheck&)>;

// Installs `checker` for the rest of the process (an empty one removes it).
void set_isolated_checker(IsolatedChecker checker);

// Runs the installed checker on `check`, once per distinct check in this process: a run builds
// one model per client from the same file. A no-op without a checker.
void run_isolated_check(const IsolatedCheck& check);

}  // namespace drift
