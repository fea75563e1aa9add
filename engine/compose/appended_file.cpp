#include "engine/compose/appended_file.hpp"

#include <cerrno>
#include <cstring>

#include "engine/core/error.hpp"

namespace drift {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void write_failed(const fs::path& p) {
  throw WriteError(p.string() + ": cannot write: " + std::strerror(errno));
}

}  // namespace

std::ofstream open_for_append(const fs::path& p) {
  errno = 0;
  std::ofstream out(p, std::ios::out | std::ios::trunc);
  if (!out) write_failed(p);
  return out;
}

void flush_checked(std::ofstream& out, const fs::path& p) {
  out.flush();
  if (!out) write_failed(p);
}

StreamHash check_mark(const fs::path& p, std::uint64_t size, const std::string& hash) {
  const auto refuse = [&](const std::string& what) {
    throw UserError(p.string() + " " + what +
                    ": cannot resume (the run directory was changed since its checkpoint, "
                    "or the checkpoint belongs to another run)");
  };
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) refuse("is missing or not a file");
  const auto now = fs::file_size(p, ec);
  if (ec) refuse("cannot be read (" + ec.message() + ")");
  if (now < size)
    refuse("is shorter (" + std::to_string(now) + " bytes) than at the checkpoint (" + std::to_string(size) + ")");
  if (size > 0) {
    std::ifstream in(p, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(size - 1));
    if (in.get() != '\n') refuse("has no line end where the checkpoint's mark (" + std::to_string(size) + ") falls");
  }
  StreamHash held;
  try {
    held = hash_file(p, size);
  } catch (const DecodeError& e) {
    refuse(std::string("cannot be read (") + e.what() + ")");
  }
  if (held.hex() != hash)
    refuse("differs in its first " + std::to_string(size) + " bytes from the file the checkpoint was taken with");
  return held;
}

std::ofstream reopen_at(const fs::path& p, std::uint64_t size) {
  std::error_code ec;
  fs::resize_file(p, size, ec);
  if (ec) throw WriteError(p.string() + ": cannot cut back to the checkpoint: " + ec.message());
  errno = 0;
  std::ofstream out(p, std::ios::out | std::ios::app);
  if (!out) write_failed(p);
  return out;
}

}  // namespace drift
