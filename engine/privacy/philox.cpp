#include "engine/privacy/philox.hpp"

#include <cmath>

namespace drift::privacy {
namespace {
constexpr std::uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57, kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;

double open_unit(std::uint64_t w) { return (static_cast<double>(w >> 11) + 0.5) * 0x1.0p-53; }
}  // namespace

PhiloxBlock philox4x32_10(PhiloxBlock c, std::array<std::uint32_t, 2> k) {
  for (int r = 0; r < 10; ++r) {
    const std::uint64_t p0 = static_cast<std::uint64_t>(kM0) * c[0], p1 = static_cast<std::uint64_t>(kM1) * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<std::uint32_t>(p0)};
    k = {k[0] + kW0, k[1] + kW1};
  }
  return c;
}

std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

NoiseStream::NoiseStream(std::uint64_t seed, std::uint32_t round, NoiseTag tag, std::optional<std::uint32_t> client)
    : round_(round), tag_(static_cast<std::uint32_t>(tag)) {
  const std::uint64_t key =
      client ? splitmix64_mix(seed + 0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(*client) + 1)) : seed;
  key_ = {static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32)};
}

std::array<double, 2> NoiseStream::uniforms(std::uint64_t block) const {
  const PhiloxBlock x =
      philox4x32_10({static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32), round_, tag_}, key_);
  const std::uint64_t a = (static_cast<std::uint64_t>(x[1]) << 32) | x[0];
  const std::uint64_t b = (static_cast<std::uint64_t>(x[3]) << 32) | x[2];
  return {open_unit(a), open_unit(b)};
}

double NoiseStream::normal(std::uint64_t k) const {
  const auto u = uniforms(k / 2);
  const double r = std::sqrt(-2.0 * std::log(u[0])), theta = 2.0 * M_PI * u[1];
  return k % 2 == 0 ? r * std::cos(theta) : r * std::sin(theta);
}

void NoiseStream::normals(double* out, std::uint64_t n, std::uint64_t first) const {
  const std::uint64_t end = first + n;
  for (std::uint64_t block = first / 2; 2 * block < end; ++block) {
    const auto u = uniforms(block);
    const double r = std::sqrt(-2.0 * std::log(u[0])), theta = 2.0 * M_PI * u[1];
    const std::uint64_t even = 2 * block, odd = even + 1;
    if (even >= first) out[even - first] = r * std::cos(theta);
    if (odd >= first && odd < end) out[odd - first] = r * std::sin(theta);
  }
}

}  // namespace drift::privacy
