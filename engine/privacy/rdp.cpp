// The formulas follow Mironov, Talwar and Zhang (2019) for Poisson sampling and Wang, Balle and
// Kasiviswanathan (2019) for sampling without replacement, in the form dp_accounting and Opacus
// compute them (docs/privacy.md#the-accountant says where the two libraries differ).
#include "engine/privacy/rdp.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "engine/privacy/log_math.hpp"

namespace drift::privacy {
namespace {

bool is_integer(double x) { return std::floor(x) == x; }

// log A_alpha for integer alpha: a finite binomial sum.
double log_a_int(double q, double sigma, long alpha) {
  double log_a = -kInf;
  const double log_q = std::log(q), log_1mq = std::log1p(-q);
  for (long i = 0; i <= alpha; ++i) {
    const double di = static_cast<double>(i);
    const double term = log_comb(static_cast<double>(alpha), di) + di * log_q +
                        static_cast<double>(alpha - i) * log_1mq + (di * di - di) / (2 * sigma * sigma);
    log_a = log_add(log_a, term);
  }
  return log_a;
}

// The two halves' terms at index i of the fractional-order series.
struct FracTerms {
  double s0, s1;
  bool positive;  // the sign of the generalised binomial coefficient
};

// `log_1mq` is log(1 - q): dp_accounting computes it as log1p(-q), Opacus as log(1 - q), and
// for q near 0 the two differ in the 9th digit of log A.
FracTerms frac_terms(double q, double log_1mq, double sigma, double alpha, long i) {
  const double di = static_cast<double>(i), j = alpha - di;
  const double z0 = sigma * sigma * std::log(1 / q - 1) + 0.5;
  const double lc = log_comb(alpha, di), log_q = std::log(q);
  const double t0 = lc + di * log_q + j * log_1mq, t1 = lc + j * log_q + di * log_1mq;
  const double e0 = std::log(0.5) + log_erfc((di - z0) / (std::sqrt(2.0) * sigma));
  const double e1 = std::log(0.5) + log_erfc((z0 - j) / (std::sqrt(2.0) * sigma));
  const long negative_steps = std::max(0L, i - static_cast<long>(std::ceil(alpha)));
  return {t0 + (di * di - di) / (2 * sigma * sigma) + e0, t1 + (j * j - j) / (2 * sigma * sigma) + e1,
          negative_steps % 2 == 0};
}

double log_a_frac_abs(double q, double sigma, double alpha) {
  double a0 = -kInf, a1 = -kInf, last0 = -kInf, last1 = -kInf;
  for (long i = 0; i < 1000; ++i) {
    const FracTerms t = frac_terms(q, std::log1p(-q), sigma, alpha, i);
    a0 = log_add(a0, t.s0);
    a1 = log_add(a1, t.s1);
    const double total = log_add(a0, a1);
    if (t.s0 < last0 && t.s1 < last1 && std::fmax(t.s0, t.s1) < total - 30) return total;
    last0 = t.s0;
    last1 = t.s1;
  }
  return kInf;  // did not converge: this order is left out of the minimum
}

double log_a_frac_signed(double q, double sigma, double alpha) {
  double a0 = -kInf, a1 = -kInf;
  for (long i = 0;; ++i) {
    const FracTerms t = frac_terms(q, std::log(1 - q), sigma, alpha, i);
    a0 = t.positive ? log_add(a0, t.s0) : log_sub(a0, t.s0);
    a1 = t.positive ? log_add(a1, t.s1) : log_sub(a1, t.s1);
    if (std::fmax(t.s0, t.s1) < -30) break;
  }
  return log_add(a0, a1);
}

// In-place forward difference of a (sign, log|value|) sequence over its first n + 1 entries.
void stable_difference(std::vector<double>& values, std::vector<bool>& positive, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    if (positive[j] == positive[j + 1]) {
      const auto [sign, magnitude] = log_sub_signed(values[j + 1], values[j]);
      const bool both_negative = !positive[j + 1];
      positive[j] = (sign > 0) != both_negative;
      values[j] = magnitude;
    } else {
      values[j] = log_add(values[j], values[j + 1]);
      positive[j] = positive[j + 1];
    }
  }
}

// log of the forward differences at 0 of exp(cgf(y - 1)), orders 1..alpha + 2.
std::vector<double> log_forward_differences(double sigma, long alpha) {
  const auto n = static_cast<std::size_t>(alpha);
  std::vector<double> values(n + 3, 0.0), deltas(n + 2, 0.0);
  std::vector<bool> positive(n + 3, true);
  for (std::size_t i = 1; i < n + 3; ++i) {
    const double x = static_cast<double>(i) - 1;
    values[i] = x * (x + 1) / (2 * sigma * sigma);
  }
  for (std::size_t i = 0; i < n + 2; ++i) {
    stable_difference(values, positive, n + 2 - i);
    deltas[i] = values[0];
  }
  return deltas;
}

double log_a_wor(double q, double sigma, long alpha) {
  if (alpha == 1) return 0.0;
  const auto cgf = [&](double x) { return x * (x + 1) / (2 * sigma * sigma); };
  const double eps2 = 2.0 / (2 * sigma * sigma);
  const double second = 2 * std::log(q) + log_comb(static_cast<double>(alpha), 2) +
                        std::fmin(std::log(4.0) + eps2 + std::log1p(-std::exp(-eps2)), eps2 + std::log(2.0));
  double log_a = log_add(0.0, second);
  const bool differences = alpha <= 256;  // past 256 dp_accounting bounds each term by the cgf alone
  const std::vector<double> d = differences ? log_forward_differences(sigma, alpha) : std::vector<double>{};
  for (long i = 3; i <= alpha; ++i) {
    const double di = static_cast<double>(i);
    double bound = std::log(2.0) + cgf(di - 1);
    if (differences) {
      const auto lo = static_cast<std::size_t>(2 * (i / 2) - 1), hi = static_cast<std::size_t>(2 * ((i + 1) / 2) - 1);
      bound = std::fmin(std::log(4.0) + 0.5 * (d[lo] + d[hi]), bound);
    }
    log_a = log_add(log_a, bound + di * std::log(q) + log_comb(static_cast<double>(alpha), di));
  }
  return log_a;
}

void check_rate(double q) {
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("Sampling rate must be in [0, 1], got " + std::to_string(q));
}
void check_noise(double z) {
  if (!(z >= 0)) throw std::invalid_argument("Noise multiplier must be >= 0, got " + std::to_string(z));
}
}  // namespace

double rdp_gaussian(double z, double alpha) {
  check_noise(z);
  if (std::isinf(alpha) || z == 0) return kInf;
  return alpha / (2 * z * z);
}

double rdp_poisson_gaussian(double q, double z, double alpha, FracMode mode) {
  check_rate(q);
  check_noise(z);
  if (q == 0) return 0.0;
  if (std::isinf(alpha) || z == 0) return kInf;
  if (q == 1) return alpha / (2 * z * z);
  double log_a;
  if (is_integer(alpha))
    log_a = log_a_int(q, z, static_cast<long>(alpha));
  else
    log_a = mode == FracMode::Abs ? log_a_frac_abs(q, z, alpha) : log_a_frac_signed(q, z, alpha);
  return log_a / (alpha - 1);
}

double rdp_wor_gaussian(double q, double z_hat, double alpha) {
  check_rate(q);
  check_noise(z_hat);
  if (q == 0) return 0.0;
  if (z_hat == 0 || std::isinf(alpha)) return kInf;
  if (q == 1) return alpha / (2 * z_hat * z_hat);
  if (is_integer(alpha)) return log_a_wor(q, z_hat, static_cast<long>(alpha)) / (alpha - 1);
  // A fractional order interpolates the cumulant between its two integer neighbours.
  const double lo = std::floor(alpha), hi = std::ceil(alpha), t = alpha - lo;
  const double x = log_a_wor(q, z_hat, static_cast<long>(lo)), y = log_a_wor(q, z_hat, static_cast<long>(hi));
  return ((1 - t) * x + t * y) / (alpha - 1);
}

std::vector<double> dpa_orders() {
  std::vector<double> orders;
  for (int x = 1; x <= 99; ++x) orders.push_back(1 + x / 10.0);
  for (int a = 11; a <= 63; ++a) orders.push_back(a);
  for (double a : {128.0, 256.0, 512.0, 1024.0}) orders.push_back(a);
  return orders;
}

std::vector<double> opacus_orders() {
  std::vector<double> orders;
  for (int x = 1; x <= 99; ++x) orders.push_back(1 + x / 10.0);
  for (int a = 12; a <= 63; ++a) orders.push_back(a);
  return orders;
}

}  // namespace drift::privacy
