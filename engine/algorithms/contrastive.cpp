#include "engine/algorithms/contrastive.hpp"

namespace drift {
namespace F = torch::nn::functional;

torch::Tensor cosine_matrix(const torch::Tensor& a, const torch::Tensor& b) {
  const auto options = F::NormalizeFuncOptions().dim(1).eps(1e-12);
  return F::normalize(a, options).matmul(F::normalize(b, options).t());
}

torch::Tensor multi_positive_info_nce(const torch::Tensor& similarities, const torch::Tensor& positive, double tau) {
  const auto logits = similarities / tau;
  const auto has_positive = positive.any(1);
  // A row without positives counts every column as positive: numerator = denominator, so its
  // loss is exactly 0 with a finite (zero) gradient, where masking to -inf would give NaN.
  const auto mask = positive.logical_or(has_positive.logical_not().unsqueeze(1));
  const auto log_numerator = torch::logsumexp(logits.masked_fill(mask.logical_not(), -1e30), 1);
  return torch::logsumexp(logits, 1) - log_numerator;
}

}  // namespace drift
