#pragma once
// The bytes of a model file a person names in model.file (a TorchScript module, an exported
// program), read with the checks every such file gets: a regular file (a FIFO would make the
// reader wait, /dev/zero never ends), at most 4 GiB, a zip archive by its two ends before it is
// read whole, read once per process and checked against the digest the scenario recorded.
#include <cstdint>
#include <string>
#include <vector>

namespace drift {

// What the file should be, for messages: {"a TorchScript module", "torch.jit.save"}.
struct ModelFileKind {
  std::string what;
  std::string writer;
};

// The file's bytes; UserError with one line for a missing, foreign or oversized file.
std::string read_model_file(const std::string& path, const ModelFileKind& kind);

// The digest a scenario records for a file's bytes (16 hex digits).
std::string model_file_digest(const std::string& bytes);

// The bytes of `path`, read once per process so that every model of a run is built from the same
// ones, and refused (UserError) when they do not have `digest` (unless it is empty).
std::string model_file_bytes(const std::string& path, const std::string& digest, const ModelFileKind& kind);

// Has a separate copy of drift read the file whose bytes have `digest` first
// (engine/core/isolated_check.hpp), and, given one sample's shape, run the model on a probe
// batch (its features when `features`, else `num_classes` logits). UserError when it refuses.
void check_model_file_apart(const std::string& path, const std::string& digest,
                            const std::vector<std::int64_t>& input_shape = {}, std::int64_t num_classes = 0,
                            bool features = false);

}  // namespace drift
