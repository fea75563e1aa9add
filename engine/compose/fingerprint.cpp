#include "engine/compose/fingerprint.hpp"

#include <cstdio>
#include <cstring>

namespace drift {
namespace {

constexpr std::uint64_t kPrime = 0x100000001b3ULL;

}  // namespace

void Fingerprint::add(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    h_ = (h_ ^ word) * kPrime;
  }
  for (; i < size; ++i) h_ = (h_ ^ bytes[i]) * kPrime;
  h_ = (h_ ^ size) * kPrime;  // so that "ab"+"c" and "a"+"bc" differ
}

void Fingerprint::add(const std::string& text) { add(text.data(), text.size()); }

void Fingerprint::add(std::uint64_t value) { add(&value, sizeof value); }

void Fingerprint::add(const torch::Tensor& tensor) {
  const auto t = tensor.contiguous().cpu();
  add(std::string(c10::toString(t.scalar_type())));
  for (auto d : t.sizes()) add(static_cast<std::uint64_t>(d));
  add(t.data_ptr(), t.numel() * t.element_size());
}

std::string Fingerprint::hex() const {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h_));
  return out;
}

std::string scenario_hash(const std::string& resolved_toml) {
  // Comment lines say where the file came from (a path on one machine), not what it means.
  Fingerprint f;
  std::size_t begin = 0;
  while (begin < resolved_toml.size()) {
    auto end = resolved_toml.find('\n', begin);
    if (end == std::string::npos) end = resolved_toml.size();
    const auto first = resolved_toml.find_first_not_of(" \t", begin);
    if (first >= end || resolved_toml[first] != '#') f.add(resolved_toml.data() + begin, end - begin);
    begin = end + 1;
  }
  return f.hex();
}

std::string data_fingerprint(const FederationData& data) {
  Fingerprint f;
  for (const auto* split : {data.data.train.get(), data.data.test.get()}) {
    f.add(split->images);
    f.add(split->labels);
    f.add(static_cast<std::uint64_t>(split->num_classes));
  }
  f.add(static_cast<std::uint64_t>(data.partition.indices.size()));
  for (const auto& client : data.partition.indices) {
    f.add(static_cast<std::uint64_t>(client.size()));
    f.add(client.data(), client.size() * sizeof(client[0]));
  }
  for (auto n : data.client_test_sizes) f.add(static_cast<std::uint64_t>(n));
  return f.hex();
}

}  // namespace drift
