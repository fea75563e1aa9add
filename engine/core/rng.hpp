#pragma once
// Keyed random streams. Every random choice in drift draws from a stream derived from
// (scenario seed, purpose, ids), e.g. ("batch-order", client, round). Streams never share
// state, so the order in which jobs run cannot change any draw. The generator and all
// distributions are written out here because the standard library's distributions are
// implementation-defined and would break byte-identical results across toolchains.
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/state_archive.hpp"

namespace drift {

// Stable 64-bit seed for a stream: FNV-1a over the purpose, then SplitMix64 over each id.
std::uint64_t stream_seed(std::uint64_t seed, std::string_view purpose, std::initializer_list<std::uint64_t> ids = {});

// xoshiro256** seeded through SplitMix64.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  std::uint64_t next_u64();
  double uniform();                      // [0, 1), 53 random bits
  double uniform_open();                 // (0, 1), safe for log()
  std::uint64_t below(std::uint64_t n);  // uniform in [0, n), unbiased; n > 0
  double normal();                       // standard normal (Box-Muller, both halves used)
  // log of a Gamma(alpha, 1) draw. Working in log space keeps tiny alphas (1e-4) from
  // underflowing to zero, which is what makes Dirichlet sampling safe for any alpha > 0.
  double log_gamma_draw(double alpha);

  // The stream's position, for a checkpoint.
  void archive(StateArchive& ar);

  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) {
      std::size_t j = static_cast<std::size_t>(below(i));
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  std::uint64_t s_[4];
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

inline Rng make_stream(std::uint64_t seed, std::string_view purpose, std::initializer_list<std::uint64_t> ids = {}) {
  return Rng(stream_seed(seed, purpose, ids));
}

// A Dirichlet(alpha * 1_k) draw, normalised in log space.
std::vector<double> dirichlet_draw(Rng& rng, double alpha, std::size_t k);

}  // namespace drift
