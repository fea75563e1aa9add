#pragma once
// Removing a directory tree without std::filesystem::remove_all.
//
// A LibTorch from a CUDA torch wheel exports its own copy of libstdc++'s filesystem symbols, and
// its remove_all calls through a null pointer: a drift linked against it crashed whenever a
// checkpoint replaced the previous one (seen on an H200 with torch 2.11, docs/devices.md).
// This walks the tree with POSIX nftw instead, which no library of drift's interposes.
#include <filesystem>
#include <system_error>

namespace drift {

// Removes `path` and everything under it, not following symbolic links; a missing path is no
// error. On failure `error` holds the first errno and the walk stops.
void remove_tree(const std::filesystem::path& path, std::error_code& error) noexcept;

}  // namespace drift
