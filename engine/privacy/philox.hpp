#pragma once
// Reproducible Gaussian noise for privacy (docs/privacy.md#noise): Philox4x32-10 counters keyed
// by (seed, round, stream tag, coordinate), so coordinate k of round t always gets the same
// draw, whatever the threads, slots or arrival order. drift's other streams (core/rng.hpp)
// are sequential; noise needs random access by coordinate, which a counter-based generator gives.
#include <array>
#include <cstdint>
#include <optional>

namespace drift::privacy {

using PhiloxBlock = std::array<std::uint32_t, 4>;

PhiloxBlock philox4x32_10(PhiloxBlock counter, std::array<std::uint32_t, 2> key);
std::uint64_t splitmix64_mix(std::uint64_t z);

// What a stream draws for; the numbers are part of the stream's identity.
enum class NoiseTag : std::uint32_t {
  UpdateNoise = 1,         // the server's noise on the clipped sum
  CountNoise = 2,          // adaptive clipping's noisy count
  LocalNoise = 3,          // a client's own noise (local DP)
  StochasticRounding = 4,  // secure aggregation: a client's rounding to integers
  Dropout = 6,             // secure aggregation: whether a client stops in a stage
  SecAggNoise = 7,         // distributed DP: a client's share of the noise
};

class NoiseStream {
 public:
  // A server stream (no client) or a client's own stream, for one round and tag.
  NoiseStream(std::uint64_t seed, std::uint32_t round, NoiseTag tag, std::optional<std::uint32_t> client = {});
  // Two uniforms strictly inside (0, 1) from block j.
  std::array<double, 2> uniforms(std::uint64_t block) const;
  // The k-th standard normal of the stream (Box-Muller on block k / 2).
  double normal(std::uint64_t k) const;
  // Fills out[0..n) with the normals of coordinates first .. first + n - 1, two per block.
  void normals(double* out, std::uint64_t n, std::uint64_t first = 0) const;

 private:
  std::array<std::uint32_t, 2> key_;
  std::uint32_t round_, tag_;
};

}  // namespace drift::privacy
