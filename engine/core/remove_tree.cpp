#include "engine/core/remove_tree.hpp"

#include <ftw.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

namespace drift {

namespace {

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return std::remove(path) == 0 ? 0 : errno; }

}  // namespace

void remove_tree(const std::filesystem::path& path, std::error_code& error) noexcept {
  error.clear();
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) error.assign(errno, std::generic_category());
    return;
  }
  // Depth first, so a directory is removed after its entries; never into a linked directory.
  constexpr int kOpenDescriptors = 16;
  const int rc = nftw(path.c_str(), remove_entry, kOpenDescriptors, FTW_DEPTH | FTW_PHYS);
  if (rc > 0)
    error.assign(rc, std::generic_category());
  else if (rc < 0)
    error.assign(errno, std::generic_category());
}

}  // namespace drift
