#pragma once
// A simplex equiangular tight frame: C unit vectors in R^K, pairwise cosine -1/(C-1), the
// fixed classifier FedKTL's clients project onto (docs/algorithms.md#fedktl). A model head builds one from a
// seed shared by every client, so it lives with the models.
#include <torch/torch.h>

#include <cstdint>

#include "engine/core/rng.hpp"

namespace drift {

// A K x C simplex ETF (unit-norm columns, pairwise cosine -1/(C-1)) drawn from `rng`. K >= C
// uses the authors' route (QR of a uniform K x C matrix, then centring); K = C-1, where that
// route can never produce orthonormal columns, uses an orthonormal basis of the complement of
// 1_C turned by a random rotation. Throws std::invalid_argument for C < 2 or K < C-1. float32.
torch::Tensor simplex_etf(std::int64_t k, std::int64_t classes, Rng& rng);

}  // namespace drift
