#pragma once
// Contrastive primitives shared by the representation-learning algorithms (FedSKC, FedSC,
// FedCCL, MOON). Every loss is evaluated in log space (log-sum-exp), so temperatures as low
// as 0.01 (exponents of 100) stay finite.
#include <torch/torch.h>

namespace drift {

// Cosine similarity of every row of `a` [n, d] with every row of `b` [m, d]: [n, m].
// Zero rows get similarity 0 (normalisation with eps 1e-12).
torch::Tensor cosine_matrix(const torch::Tensor& a, const torch::Tensor& b);

// Per row i: -log( sum_{j: positive(i,j)} e^{s_ij/tau} / sum_j e^{s_ij/tau} ), the
// multi-positive InfoNCE of FPL / FedCCL (one positive per row gives plain InfoNCE).
// Rows without a positive contribute 0 (and no gradient). Returns [n].
torch::Tensor multi_positive_info_nce(const torch::Tensor& similarities, const torch::Tensor& positive, double tau);

}  // namespace drift
