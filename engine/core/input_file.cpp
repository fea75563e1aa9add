#include "engine/core/input_file.hpp"

#include <filesystem>
#include <sstream>

#include "engine/core/error.hpp"

namespace drift {

std::ifstream open_input_file(const std::string& path, const std::string& what) {
  // An ifstream opens a directory without complaint, and reading it then looks like an empty file.
  if (std::filesystem::is_directory(path)) throw UserError(path + " is a directory, not a " + what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot open " + what);
  return in;
}

std::optional<std::string> read_own_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  try {
    text << in.rdbuf();
  } catch (const std::ios_base::failure&) {
    return std::nullopt;
  }
  return text.str();
}

}  // namespace drift
