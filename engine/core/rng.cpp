#include "engine/core/rng.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace drift {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

constexpr double kTwoPi = 6.283185307179586476925286766559;

}  // namespace

std::uint64_t stream_seed(std::uint64_t seed, std::string_view purpose, std::initializer_list<std::uint64_t> ids) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : purpose) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  std::uint64_t state = seed ^ h;
  std::uint64_t out = splitmix64(state);
  for (std::uint64_t id : ids) {
    state ^= out + id * 0xD1B54A32D192ED03ULL;
    out = splitmix64(state);
  }
  return out;
}

Rng::Rng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Rng::uniform_open() { return (static_cast<double>(next_u64() >> 12) + 0.5) * 0x1.0p-52; }

std::uint64_t Rng::below(std::uint64_t n) {
  if (n == 0) throw std::invalid_argument("Rng::below(0)");
  // Lemire's multiply-and-reject: unbiased with one 128-bit multiply in the common case.
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double Rng::normal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  const double r = std::sqrt(-2.0 * std::log(uniform_open()));
  const double theta = kTwoPi * uniform();
  spare_normal_ = r * std::sin(theta);
  has_spare_normal_ = true;
  return r * std::cos(theta);
}

double Rng::log_gamma_draw(double alpha) {
  if (!(alpha > 0.0)) throw std::invalid_argument("gamma draw needs alpha > 0");
  if (alpha < 1.0) {
    // Gamma(a) = Gamma(a + 1) * U^(1/a), taken in log space.
    return log_gamma_draw(alpha + 1.0) + std::log(uniform_open()) / alpha;
  }
  // Marsaglia and Tsang (2000).
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform_open();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return std::log(d * v);
  }
}

std::vector<double> dirichlet_draw(Rng& rng, double alpha, std::size_t k) {
  std::vector<double> logs(k);
  for (auto& l : logs) l = rng.log_gamma_draw(alpha);
  const double top = *std::max_element(logs.begin(), logs.end());
  double total = 0.0;
  for (auto& l : logs) {
    l = std::exp(l - top);
    total += l;
  }
  for (auto& l : logs) l /= total;
  return logs;
}

void Rng::archive(StateArchive& ar) {
  for (auto& s : s_) ar.value(s);
  ar.value(has_spare_normal_);
  ar.value(spare_normal_);
}

}  // namespace drift
