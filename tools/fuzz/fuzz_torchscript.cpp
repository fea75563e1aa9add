// Model files a person names in model.file, read as a run reads them. drift's own archive
// checks run here on every input, its two ends also from streams that declare more bytes than
// they hold, and non-regular files (a FIFO, /dev/zero, a directory) are refused once per
// process. Then, as drift's isolated check does (engine/core/isolated_check.hpp), a child
// process reads the file, builds the model and calls it on a probe batch: LibTorch 1.13's
// TorchScript importer crashes on some malformed module code, and such a crash, or a hang,
// refuses the file. Only a file the child got through is read in this process, as a run then
// reads it; a crash, a leak or an unexpected exception here is a finding.
#include <sanitizer/common_interface_defs.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "engine/core/remove_tree.hpp"
#include "engine/models/model.hpp"
#include "engine/models/script_archive.hpp"
#include "engine/models/torchscript_model.hpp"
#include "fuzz_child.hpp"
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

// Files that are no file a module could be in (a FIFO would make a reader wait for a writer,
// /dev/zero never ends, a directory reads as empty): each must be refused at once, before it is
// read. Checked once per process; an answer other than UserError, or a hang, is a finding.
void refuse_non_regular_files() {
  static const bool checked = [] {
    const auto dir = std::filesystem::temp_directory_path() / ("fuzz-torchscript-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const auto fifo = (dir / "fifo.pt").string();
    mkfifo(fifo.c_str(), 0600);
    for (const std::string& path : {fifo, std::string("/dev/zero"), dir.string()}) {
      alarm(10);
      try {
        drift::inspect_script_module(path);
        std::abort();  // accepted
      } catch (const drift::UserError&) {
      }
      alarm(0);
    }
    std::error_code error;
    drift::remove_tree(dir, error);
    return true;
  }();
  (void)checked;
}

// The archive's two ends read from a stream that declares more bytes than it holds, as a file
// that shrank, or a huge sparse one, would: refused, without reading or allocating the claim.
void declared_sizes(const std::string& bytes, const std::string& name) {
  std::uint64_t extra = 0;
  for (std::size_t i = 0; i < std::min<std::size_t>(bytes.size(), 5); ++i)
    extra = extra << 8 | static_cast<unsigned char>(bytes[i]);
  for (const std::uint64_t declared : {std::uint64_t{bytes.size()}, bytes.size() + 1 + extra, std::uint64_t{1} << 40}) {
    std::istringstream in(bytes);
    try {
      drift::check_archive_ends(in, declared, name);
    } catch (const drift::UserError&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  refuse_non_regular_files();
  return drift::fuzz::read_as_file(data, size, ".pt", [&](const std::string& path) {
    declared_sizes(std::string(reinterpret_cast<const char*>(data), size), path);
    drift::check_script_archive(std::string(reinterpret_cast<const char*>(data), size), path);
    if (const int end = drift::fuzz::read_in_child(path, read_model); end == 0 || end == 3) read_model(path);
  });
}
