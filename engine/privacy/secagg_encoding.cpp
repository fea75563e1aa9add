#include "engine/privacy/secagg_encoding.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace drift::privacy {

EncodedInput encode_flower(const std::vector<double>& x, double weight, const FlowerEncoding& e,
                           const RoundingDraw& uniform) {
  const double c = e.clip_range, q = static_cast<double>(e.quantization);
  EncodedInput out;
  out.values.reserve(x.size() + 1);
  const double q_w = std::nearbyint(weight / e.max_weight * q);
  const double dq = q_w / q;
  out.values.push_back(static_cast<std::uint64_t>(std::max(q_w, 0.0)));
  for (std::uint64_t j = 0; j < x.size(); ++j) {
    const double v = dq * x[j];
    if (std::abs(v) > c) ++out.clipped_coords;
    const double p = (std::clamp(v, -c, c) + c) * q / (2 * c);  // in [0, Q]: Q + 1 levels
    double r;
    if (uniform) {
      r = std::ceil(p);  // round down with probability ceil(p) - p: unbiased
      if (uniform(j) < r - p) r -= 1;
    } else {
      r = std::nearbyint(p);
    }
    out.values.push_back(static_cast<std::uint64_t>(r));
  }
  return out;
}

void ModularSum::add(const std::vector<std::uint64_t>& values) {
  if (exact_.empty()) exact_.assign(values.size(), 0);
  if (values.size() != exact_.size()) throw std::logic_error("secure aggregation: inputs of different lengths");
  for (std::size_t k = 0; k < values.size(); ++k) exact_[k] += values[k];
  ++inputs_;
}

std::vector<std::uint64_t> ModularSum::reduced() const {
  std::vector<std::uint64_t> out(exact_.size());
  for (std::size_t k = 0; k < exact_.size(); ++k) out[k] = static_cast<std::uint64_t>(exact_[k] % modulus_);
  return out;
}

std::uint64_t ModularSum::overflow_count() const {
  return static_cast<std::uint64_t>(
      std::count_if(exact_.begin(), exact_.end(), [&](unsigned __int128 s) { return s >= modulus_; }));
}

std::vector<double> decode_flower_mean(const std::vector<std::uint64_t>& agg, std::uint32_t summed,
                                       const FlowerEncoding& e) {
  const double c = e.clip_range, q = static_cast<double>(e.quantization);
  const double q_total = static_cast<double>(agg.at(0));
  std::vector<double> out(agg.size() - 1);
  for (std::size_t j = 0; j < out.size(); ++j) {
    const double v = static_cast<double>(agg[j + 1]) * (2 * c / q) - c - (summed - 1.0) * c;
    out[j] = v * q / q_total;
  }
  return out;
}

std::vector<double> decode_flower_sum(const std::vector<std::uint64_t>& agg, std::uint32_t summed,
                                      const FlowerEncoding& e) {
  const double c = e.clip_range, q = static_cast<double>(e.quantization);
  std::vector<double> out(agg.size() - 1);
  for (std::size_t j = 0; j < out.size(); ++j) out[j] = static_cast<double>(agg[j + 1]) * (2 * c / q) - summed * c;
  return out;
}

namespace {

void check_fixed_point(const FixedPoint& f) {
  if (f.bits < 1 || f.bits > 64) throw std::invalid_argument("fixed point: bits must be in [1, 64]");
  if (!(f.scale > 0)) throw std::invalid_argument("fixed point: the scale must be positive");
}

__int128 half_range(const FixedPoint& f) { return static_cast<__int128>(1) << (f.bits - 1); }

}  // namespace

std::int64_t flsim_convert(double x, const FixedPoint& f, std::uint64_t& convert_overflows) {
  check_fixed_point(f);
  const long double hi = static_cast<long double>(half_range(f) - 1), lo = -static_cast<long double>(half_range(f));
  const long double y = static_cast<long double>(f.scale) * x;
  if (y > hi) ++convert_overflows;
  return static_cast<std::int64_t>(std::nearbyint(std::clamp(y, lo, hi)));
}

std::int64_t flsim_accumulate(std::int64_t sum, std::int64_t value, const FixedPoint& f,
                              std::uint64_t& aggregate_overflows) {
  check_fixed_point(f);
  const __int128 half = half_range(f);
  __int128 a = static_cast<__int128>(sum) + value;
  if (a >= 0) {
    aggregate_overflows += static_cast<std::uint64_t>(a / half);
    a %= half;
  } else {
    a += half * ((-a) / half);  // into (-2^(b-1), 0]; exactly -2^(b-1) becomes 0
  }
  return static_cast<std::int64_t>(a);
}

std::int64_t signed_mod_accumulate(std::int64_t sum, std::int64_t value, const FixedPoint& f) {
  check_fixed_point(f);
  const __int128 half = half_range(f), range = 2 * half;
  __int128 a = (static_cast<__int128>(sum) + value + half) % range;
  if (a < 0) a += range;
  return static_cast<std::int64_t>(a - half);
}

}  // namespace drift::privacy
