#pragma once
// Log-space arithmetic for the privacy accountant (docs/privacy.md#the-accountant). The RDP of
// a subsampled Gaussian sums terms that overflow a double long before the result does, so every
// sum is kept as a logarithm. All functions are thread-safe (no lgamma signgam).
#include <limits>
#include <utility>

namespace drift::privacy {

// The accountant's sums start from log 0 and its searches from an infinite bound.
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// log(e^x + e^y), exact for -inf arguments.
double log_add(double x, double y);
// (sign, log|e^x - e^y|): sign +1 when x >= y; (+1, -inf) when x == y.
std::pair<int, double> log_sub_signed(double x, double y);
// log(e^x - e^y) for x >= y (Opacus's form); throws std::domain_error when x < y.
double log_sub(double x, double y);
// log|binom(n, k)| for real n and integer k >= 0 (generalised binomial).
double log_comb(double n, double k);
// log(erfc(x)), accurate to about 1e-12 absolute for every x (asymptotic series past 25).
double log_erfc(double x);

}  // namespace drift::privacy
