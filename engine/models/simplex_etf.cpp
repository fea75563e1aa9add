#include "engine/models/simplex_etf.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace drift {
namespace {

torch::Tensor uniform_matrix(std::int64_t rows, std::int64_t cols, Rng& rng) {
  auto m = torch::empty({rows, cols}, torch::kFloat64);
  auto a = m.accessor<double, 2>();
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) a[i][j] = rng.uniform();
  return m;
}

// Orthonormal columns spanning the same space as `m`'s (QR, signs fixed so R's diagonal is
// positive: the result then depends on `m` alone, not on the LAPACK build).
torch::Tensor orthonormal_columns(const torch::Tensor& m) {
  auto [q, r] = torch::linalg_qr(m, "reduced");
  return q * torch::sign(torch::diagonal(r)).unsqueeze(0);
}

}  // namespace

torch::Tensor simplex_etf(std::int64_t k, std::int64_t classes, Rng& rng) {
  if (classes < 2) throw std::invalid_argument("a simplex ETF needs at least 2 classes");
  if (k < classes - 1)
    throw std::invalid_argument("a simplex ETF of " + std::to_string(classes) +
                                " classes needs K >= " + std::to_string(classes - 1) + ", got " + std::to_string(k));
  const auto c = static_cast<double>(classes);
  const auto centring =
      torch::eye(classes, torch::kFloat64) - torch::full({classes, classes}, 1.0 / c, torch::kFloat64);
  torch::Tensor basis;  // K x C with P^T P = I (K >= C), or the K = C-1 equivalent of P (I - 11^T/C)
  if (k >= classes) {
    basis = orthonormal_columns(uniform_matrix(k, classes, rng)).matmul(centring);
  } else {
    // Columns 2..C of a QR of [1 | random] span the complement of 1; U U^T = I - 11^T/C.
    auto seed = torch::cat({torch::ones({classes, 1}, torch::kFloat64), uniform_matrix(classes, classes - 1, rng)}, 1);
    const auto u = orthonormal_columns(seed).narrow(1, 1, classes - 1);    // C x (C-1)
    const auto rotation = orthonormal_columns(uniform_matrix(k, k, rng));  // (C-1) x (C-1)
    basis = rotation.matmul(u.t());
  }
  return (std::sqrt(c / (c - 1.0)) * basis).to(torch::kFloat32);
}

}  // namespace drift
