#pragma once
// Opening a file a person named in a scenario or on the command line: a directory, or a file
// that cannot be opened, is refused with one line naming it and what it should have been.
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace drift {

// `what` says what the file should be ("partition file (JSON)"). Throws UserError.
std::ifstream open_input_file(const std::string& path, const std::string& what);

// The whole of a file drift wrote itself (study.json, summary.json, partition.json), or nothing
// when it is missing, is no regular file (a directory made in its place) or cannot be read: its
// readers take nothing as "not written". (An ifstream opens a directory, and reading it throws.)
std::optional<std::string> read_own_file(const std::filesystem::path& path);

}  // namespace drift
