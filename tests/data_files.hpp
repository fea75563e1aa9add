#pragma once
// For tests that write datasets in their distributed formats: fresh folders, whole files, and
// the DataConfig that points at them.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/config/scenario.hpp"

namespace drift::test {

// An empty folder under the system's temporary directory, unique to this process and tag.
inline std::filesystem::path fresh_folder(const std::string& tag) {
  const auto dir = std::filesystem::temp_directory_path() / ("drift-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

inline DataConfig data_config(const std::string& dataset, const std::filesystem::path& dir) {
  DataConfig c;
  c.dataset = dataset;
  c.path = dir.string();
  return c;
}

}  // namespace drift::test
