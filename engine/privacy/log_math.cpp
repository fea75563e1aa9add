#include "engine/privacy/log_math.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace drift::privacy {
namespace {

// lgamma without touching the global signgam (std::lgamma may write it), so accountants on
// several threads never race.
double log_abs_gamma(double x) {
  int sign = 0;
  return ::lgamma_r(x, &sign);
}
}  // namespace

double log_add(double x, double y) {
  const double a = std::fmin(x, y), b = std::fmax(x, y);
  if (a == -kInf) return b;
  return b + std::log1p(std::exp(a - b));
}

std::pair<int, double> log_sub_signed(double x, double y) {
  if (x > y) return {1, x + std::log1p(-std::exp(y - x))};
  if (x < y) return {-1, y + std::log1p(-std::exp(x - y))};
  return {1, -kInf};
}

double log_sub(double x, double y) {
  if (x < y) throw std::domain_error("log_sub: the result would be negative");
  if (y == -kInf) return x;
  if (x == y) return -kInf;
  const double d = std::expm1(x - y);
  if (std::isinf(d)) return x;  // e^x dwarfs e^y
  return std::log(d) + y;
}

double log_comb(double n, double k) { return log_abs_gamma(n + 1) - log_abs_gamma(k + 1) - log_abs_gamma(n - k + 1); }

double log_erfc(double x) {
  if (x < 25) return std::log(std::erfc(x));
  // erfc underflows here; its asymptotic expansion is accurate to 2e-13 at x = 25.
  const double r = 1.0 / (x * x);
  return -x * x - std::log(x) - 0.5 * std::log(M_PI) - 0.5 * r + 0.625 * r * r - 37.0 / 24.0 * r * r * r +
         353.0 / 64.0 * r * r * r * r;
}

}  // namespace drift::privacy
