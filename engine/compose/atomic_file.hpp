#pragma once
// Files of a run directory that must never be seen half written.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace drift {

// Writes `text` to `path` + ".partial", flushes it to the disk and renames it into place, so a
// reader, a crash or a full disk leaves the old file or the new one, never a part. Throws
// WriteError naming `path`.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);
// The same with the file's bytes in pieces, written in order and never joined in memory.
void write_file_atomically(const std::filesystem::path& path, const std::vector<std::string_view>& parts);
// Flushes a directory's entries (renames into it) to the disk; errors are ignored, since not
// every file system supports it.
void sync_directory(const std::filesystem::path& directory);

}  // namespace drift
