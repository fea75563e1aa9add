#include "engine/core/stream_hash.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "engine/core/error.hpp"

namespace drift {
namespace {

constexpr std::uint64_t kPrime = 0x100000001b3ULL;

}  // namespace

void StreamHash::mix(const unsigned char* word) {
  std::uint64_t w;
  std::memcpy(&w, word, 8);
  h_ = (h_ ^ w) * kPrime;
}

void StreamHash::add(const char* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  bytes_ += size;
  std::size_t i = 0;
  if (tail_size_ > 0) {  // complete the word the last piece began
    while (tail_size_ < 8 && i < size) tail_[tail_size_++] = bytes[i++];
    if (tail_size_ < 8) return;
    mix(tail_);
    tail_size_ = 0;
  }
  for (; i + 8 <= size; i += 8) mix(bytes + i);
  for (; i < size; ++i) tail_[tail_size_++] = bytes[i];
}

std::uint64_t StreamHash::value() const {
  std::uint64_t h = h_;
  for (std::size_t i = 0; i < tail_size_; ++i) h = (h ^ tail_[i]) * kPrime;
  return (h ^ bytes_) * kPrime;  // so that streams that differ only in trailing zeros differ
}

std::string StreamHash::hex() const {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(value()));
  return out;
}

StreamHash hash_file(const std::filesystem::path& file, std::uint64_t limit) {
  std::ifstream in(file, std::ios::binary);
  if (!in || std::filesystem::is_directory(file)) throw DecodeError(file.string() + ": cannot be read");
  std::vector<char> chunk(std::size_t{1} << 20);
  StreamHash hash;
  while (hash.bytes() < limit) {
    in.read(chunk.data(), static_cast<std::streamsize>(std::min<std::uint64_t>(chunk.size(), limit - hash.bytes())));
    if (in.gcount() <= 0) break;
    hash.add(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (limit != UINT64_MAX && hash.bytes() < limit)
    throw DecodeError(file.string() + " holds " + std::to_string(hash.bytes()) + " bytes, fewer than " +
                      std::to_string(limit));
  return hash;
}

}  // namespace drift
