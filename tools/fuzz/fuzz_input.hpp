#pragma once
// What every fuzz target does with libFuzzer's bytes. A refusal (DecodeError for a message,
// UserError for a file a person wrote) is the right answer to bad input; any other exception,
// a crash, a leak or undefined behaviour is a finding.
#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/core/error.hpp"
#include "messages/buffer.hpp"

namespace drift::fuzz {

template <class Decode>
int decode_bytes(const std::uint8_t* data, std::size_t size, Decode&& decode) {
  const msg::Buffer buffer(std::vector<char>(data, data + size));
  try {
    decode(buffer);
  } catch (const DecodeError&) {
  } catch (const UserError&) {
  }
  return 0;
}

// Runs every decoder on the same bytes; each may refuse them on its own.
template <class... Decoders>
void each_decoder(const msg::Buffer& buffer, Decoders&&... decoders) {
  auto one = [&](auto&& decode) {
    try {
      decode(buffer);
    } catch (const DecodeError&) {
    }
  };
  (one(decoders), ...);
}

// Readers that take a path: the bytes go to a file of this process first.
template <class Read>
int read_as_file(const std::uint8_t* data, std::size_t size, const char* suffix, Read&& read) {
  static const auto path =
      (std::filesystem::temp_directory_path() / ("drift-fuzz-" + std::to_string(::getpid()) + suffix)).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    read(path);
  } catch (const UserError&) {
  }
  return 0;
}

}  // namespace drift::fuzz
