#pragma once
#include <torch/torch.h>

#include <vector>

namespace drift {

// (mu / 2) * sum_i ||params_i - anchor_i||^2, differentiable in params.
torch::Tensor proximal_term(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& anchor,
                            double mu);

}  // namespace drift
