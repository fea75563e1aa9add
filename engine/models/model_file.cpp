#include "engine/models/model_file.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>

#include "engine/core/error.hpp"
#include "engine/core/input_file.hpp"
#include "engine/core/isolated_check.hpp"
#include "engine/core/stream_hash.hpp"
#include "engine/models/zip_archive.hpp"

namespace drift {
namespace {

// Larger model files are refused before they are read (a federated model is far smaller).
constexpr std::uint64_t kLargestModelFile = std::uint64_t{4} << 30;

}  // namespace

std::string read_model_file(const std::string& path, const ModelFileKind& kind) {
  const std::string what = kind.what + " (a file " + kind.writer + " wrote)";
  // Asked before opening: opening a FIFO waits for a writer, and /dev/zero never ends.
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!error && std::filesystem::exists(status) && !std::filesystem::is_directory(status) &&
      !std::filesystem::is_regular_file(status))
    throw UserError(path + " is not a regular file (a FIFO, device or socket), not " + what);
  auto in = open_input_file(path, what);
  const auto size = std::filesystem::file_size(path, error);
  if (error) throw UserError(path + ": cannot read the size of " + what);
  if (size > kLargestModelFile)
    throw UserError(path + " holds " + std::to_string(size) + " bytes; drift reads model files of up to " +
                    std::to_string(kLargestModelFile >> 30) + " GiB");
  // The archive's ends first, so that a file that is no zip archive is refused before it is read.
  check_archive_ends(in, size, ArchiveRefusal(path, kind.what, kind.writer));
  std::string bytes(size, '\0');
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::uint64_t>(in.gcount()) != size) throw UserError(path + ": the file shrank while it was read");
  return bytes;
}

std::string model_file_digest(const std::string& bytes) {
  StreamHash hash;
  hash.add(bytes);
  return hash.hex();
}

std::string model_file_bytes(const std::string& path, const std::string& digest, const ModelFileKind& kind) {
  static std::mutex mutex;
  static std::map<std::string, std::string> by_path;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = by_path.find(path);
  if (it == by_path.end()) it = by_path.emplace(path, read_model_file(path, kind)).first;
  if (digest.empty() || model_file_digest(it->second) == digest) return it->second;
  it->second = read_model_file(path, kind);  // rewritten since it was first read
  if (const auto now = model_file_digest(it->second); now != digest)
    throw UserError("model.file " + path + " has digest " + now + ", but the scenario was resolved with " + digest +
                    ": the file changed since (or this machine holds another one)");
  return it->second;
}

void check_model_file_apart(const std::string& path, const std::string& digest,
                            const std::vector<std::int64_t>& input_shape, std::int64_t num_classes, bool features) {
  IsolatedCheck check;
  check.path = path;
  check.digest = digest;
  check.input_shape = input_shape;
  check.num_classes = num_classes;
  check.features = features;
  run_isolated_check(check);
}

}  // namespace drift
