#pragma once
// The files a run appends to (metrics.jsonl, clients.csv, timings.jsonl, and the tables
// written once): every write checked, so a full disk ends the run with the file's name, never
// with a line cut short; and, on resume, each file checked against its checkpoint mark and cut
// back to it (docs/checkpoints.md#integrity).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/stream_hash.hpp"

namespace drift {

// `p` emptied and open for writing; throws WriteError.
std::ofstream open_for_append(const std::filesystem::path& p);
// Flushes `out` and throws WriteError naming `p` if anything failed.
void flush_checked(std::ofstream& out, const std::filesystem::path& p);
// Whether `p` still holds, in its first `size` bytes, what it held when the checkpoint was
// taken (`hash`), ending at a line's end; returns the hash of those bytes, to go on from.
// Throws UserError saying what differs.
StreamHash check_mark(const std::filesystem::path& p, std::uint64_t size, const std::string& hash);
// `p` cut back to `size` bytes (checked by check_mark), open for appending; throws WriteError.
std::ofstream reopen_at(const std::filesystem::path& p, std::uint64_t size);

}  // namespace drift
