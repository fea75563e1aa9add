#pragma once
// A 64-bit hash of a byte stream that does not depend on how the stream was cut into pieces:
// "ab" + "c" hashes as "a" + "bc". It guards against mistakes (a flipped bit, a truncated or
// foreign file), not against an attacker. A run directory keeps one per appended file, updated
// as it writes, so a checkpoint records what each file held without reading it back
// (docs/checkpoints.md#integrity).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace drift {

class StreamHash {
 public:
  void add(const char* data, std::size_t size);
  void add(const std::string& text) { add(text.data(), text.size()); }
  std::uint64_t bytes() const { return bytes_; }  // added so far
  std::uint64_t value() const;                    // of everything added so far
  std::string hex() const;                        // value() in 16 hex digits

 private:
  void mix(const unsigned char* word);
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
  std::uint64_t bytes_ = 0;
  unsigned char tail_[8] = {};  // the bytes after the last whole 8-byte word
  std::size_t tail_size_ = 0;
};

// The hash of a file's first `limit` bytes (all of it by default). Throws DecodeError naming the
// file when it cannot be read or is shorter than `limit`.
StreamHash hash_file(const std::filesystem::path& file, std::uint64_t limit = UINT64_MAX);

}  // namespace drift
