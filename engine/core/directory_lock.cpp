#include "engine/core/directory_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "engine/core/error.hpp"

namespace drift {
namespace fs = std::filesystem;

namespace {

// What the holder wrote into the lock file: who it is, since when.
std::string holder_of(int fd) {
  char text[256] = {};
  const auto n = ::pread(fd, text, sizeof text - 1, 0);
  std::string holder(text, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
  return holder.empty() ? "another process" : holder;
}

std::string now_text() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

}  // namespace

DirectoryLock::DirectoryLock(const fs::path& directory, const std::string& holder) {
  const auto file = directory / kFileName;
  // O_CLOEXEC: a child a holder starts (a study's runs, gnuplot) must not keep the lock alive.
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw WriteError(file.string() + ": cannot create the directory's lock: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const auto who = holder_of(fd);
    ::close(fd);
    if (error == EWOULDBLOCK)
      throw UserError(directory.string() + " is in use by " + who +
                      ": one process at a time may write a run or study directory; wait for it to end or stop it");
    throw WriteError(file.string() + ": cannot lock: " + std::strerror(error));
  }
  // Only for the message a second process prints: the lock is the flock, not this text.
  const auto text = holder + " (pid " + std::to_string(::getpid()) + ", since " + now_text() + ")\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
    // A full disk: the lock is held all the same, and the run will say what it cannot write.
  }
  fd_ = fd;
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

bool is_empty_but_lock(const fs::path& directory) {
  for (const auto& e : fs::directory_iterator(directory))
    if (e.path().filename() != DirectoryLock::kFileName) return false;
  return true;
}

}  // namespace drift
