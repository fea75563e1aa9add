#pragma once
// One process at a time in a run or study directory (docs/checkpoints.md#locks). Two
// processes appending to one metrics.jsonl, or swapping one checkpoint, corrupt the run; so
// `run`, `resume`, `study` and each study child hold an exclusive flock(2) on DIR/.lock while
// they write there. The kernel releases it when the holder dies, however it dies, so a
// SIGKILLed run can be resumed at once and no stale lock is ever left to clear by hand.
#include <filesystem>
#include <string>

namespace drift {

class DirectoryLock {
 public:
  // Takes the lock of `directory` (which must exist) for `holder`, a few words saying who
  // holds it ("drift run"). Throws UserError naming the process that holds it already, and
  // WriteError when the lock file cannot be made.
  DirectoryLock(const std::filesystem::path& directory, const std::string& holder);
  DirectoryLock() = default;  // holds nothing
  ~DirectoryLock();
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  bool held() const { return fd_ >= 0; }

  // The lock file's name inside a locked directory; what lists a directory's contents skips it.
  static constexpr const char* kFileName = ".lock";

 private:
  int fd_ = -1;
};

// Whether `directory` holds nothing but, perhaps, its lock file.
bool is_empty_but_lock(const std::filesystem::path& directory);

}  // namespace drift
