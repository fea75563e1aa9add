#pragma once
// An immutable, shared, word-aligned Cap'n Proto message. Copying a Buffer copies a pointer,
// so one round's task is encoded once and handed to every client; tensors decoded from a
// Buffer alias its bytes and keep it alive.
#include <cstddef>
#include <memory>
#include <vector>

namespace drift::msg {

class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::vector<char> bytes) : bytes_(std::make_shared<const std::vector<char>>(std::move(bytes))) {}

  const char* data() const { return bytes_ ? bytes_->data() : nullptr; }
  std::size_t size() const { return bytes_ ? bytes_->size() : 0; }
  bool empty() const { return size() == 0; }
  const std::vector<char>& bytes() const;
  const std::shared_ptr<const std::vector<char>>& shared() const { return bytes_; }

 private:
  std::shared_ptr<const std::vector<char>> bytes_;
};

// Limits a reader applies before trusting a buffer.
struct DecodeLimits {
  std::size_t max_bytes = std::size_t{4} << 30;  // larger messages are rejected outright
};

}  // namespace drift::msg
