#pragma once
// Turning a Cap'n Proto builder into a Buffer and a Buffer back into a checked reader: the two
// steps every encoder and decoder of drift shares.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/error.hpp"
#include "messages/buffer.hpp"

namespace drift::msg::framing {

// Serialises a finished builder: the only copy of tensor bytes happens here.
inline Buffer finish(capnp::MessageBuilder& message) {
  const std::size_t words = capnp::computeSerializedSizeInWords(message);
  std::vector<char> bytes(words * sizeof(capnp::word));
  kj::ArrayOutputStream out(kj::arrayPtr(reinterpret_cast<kj::byte*>(bytes.data()), bytes.size()));
  capnp::writeMessage(out, message);
  return Buffer(std::move(bytes));
}

// A Cap'n Proto list of numbers as a vector, and back.
template <class T, class List>
std::vector<T> read_list(List list) {
  std::vector<T> out;
  out.reserve(list.size());
  for (auto v : list) out.push_back(v);
  return out;
}

template <class List>
std::vector<std::uint32_t> read_u32_list(List list) {
  return read_list<std::uint32_t>(list);
}

template <class Builder, class Values>
void write_list(Builder list, const Values& values) {
  for (unsigned i = 0; i < values.size(); ++i) list.set(i, values[i]);
}

// A message without tensors: `fill` sets the fields of root `Root`.
template <class Root, class Fill>
Buffer build(Fill&& fill) {
  capnp::MallocMessageBuilder message;
  fill(message.template initRoot<Root>());
  return finish(message);
}

// Opens `buffer` as a message with root `Root` and hands the root to `read`. All bounds are
// checked here; capnp's own errors (bad pointers, truncation, traversal limit) and drift's
// semantic checks both leave as DecodeError naming the message kind.
template <class Root, class Read>
auto parse(const Buffer& buffer, const DecodeLimits& limits, const char* what, Read&& read) {
  const std::string prefix = std::string("malformed ") + what + " message: ";
  if (buffer.size() > limits.max_bytes) {
    throw DecodeError(std::string(what) + " message of " + std::to_string(buffer.size()) +
                      " bytes exceeds the limit of " + std::to_string(limits.max_bytes) + " bytes");
  }
  if (buffer.size() < sizeof(capnp::word)) throw DecodeError(prefix + "empty or truncated");
  if (buffer.size() % sizeof(capnp::word) != 0)
    throw DecodeError(prefix + "size " + std::to_string(buffer.size()) +
                      " is not a whole number of words (truncated?)");
  if (reinterpret_cast<std::uintptr_t>(buffer.data()) % alignof(capnp::word) != 0)
    throw DecodeError(prefix + "buffer is not word-aligned");
  const auto words =
      kj::arrayPtr(reinterpret_cast<const capnp::word*>(buffer.data()), buffer.size() / sizeof(capnp::word));
  try {
    capnp::ReaderOptions options;
    // Every word is read a bounded number of times; this stops pointer loops and
    // amplification attacks without rejecting honest messages of any size.
    options.traversalLimitInWords = words.size() * 4 + 1024;
    options.nestingLimit = 32;
    capnp::FlatArrayMessageReader reader(words, options);
    if (reader.getEnd() != words.end()) throw DecodeError(prefix + "trailing bytes after the message");
    return read(reader.template getRoot<Root>(), buffer.shared());
  } catch (const kj::Exception& e) {
    throw DecodeError(prefix + e.getDescription().cStr());
  } catch (const DecodeError& e) {
    const std::string message = e.what();
    if (message.rfind(prefix, 0) == 0) throw;
    throw DecodeError(prefix + message);
  }
}

}  // namespace drift::msg::framing
