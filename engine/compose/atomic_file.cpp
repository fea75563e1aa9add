#include "engine/compose/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/error.hpp"

namespace drift {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void cannot_write(const fs::path& p, int cause) {
  throw WriteError(p.string() + ": cannot write: " + std::strerror(cause));
}

// Writes all of `text` to `fd`; 0, or the errno that stopped it.
int write_all(int fd, std::string_view text) {
  std::size_t written = 0;
  while (written < text.size()) {
    const auto n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

void write_file_atomically(const fs::path& path, const std::string& text) {
  write_file_atomically(path, std::vector<std::string_view>{text});
}

void write_file_atomically(const fs::path& path, const std::vector<std::string_view>& parts) {
  const fs::path temporary = path.string() + ".partial";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) cannot_write(path, errno);
  int cause = 0;
  for (const auto part : parts)
    if (cause == 0) cause = write_all(fd, part);
  if (cause == 0 && ::fsync(fd) != 0 && errno != EINVAL) cause = errno;
  if (::close(fd) != 0 && cause == 0) cause = errno;
  if (cause != 0) {
    ::unlink(temporary.c_str());
    cannot_write(path, cause);
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) throw WriteError(path.string() + ": cannot write: " + ec.message());
}

void sync_directory(const fs::path& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace drift
