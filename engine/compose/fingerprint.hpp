#pragma once
// Hashes that let a coordinator and a worker confirm they hold the same scenario and the same
// data before any job moves. They guard against mistakes (another dataset file, another
// drift), not against an attacker: the join token and TLS do that.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/compose/federation_data.hpp"

namespace drift {

// A 64-bit FNV-1a-style hash, fed 8 bytes at a time so that hashing a dataset is cheap.
class Fingerprint {
 public:
  void add(const void* data, std::size_t size);
  void add(const std::string& text);
  void add(std::uint64_t value);
  void add(const torch::Tensor& tensor);  // dtype, shape and bytes
  std::string hex() const;                // 16 hex digits

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

// Of the resolved scenario without its comment lines (which name the source file).
std::string scenario_hash(const std::string& resolved_toml);

// Train and test tensors, the partition and the held-out test sizes.
std::string data_fingerprint(const FederationData& data);

}  // namespace drift
