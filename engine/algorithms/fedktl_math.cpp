#include "engine/algorithms/fedktl_math.hpp"

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
    throw std::invalid_argument("a simplex ETF of " + std::to_string(classes) + " classes needs K >= " +
                                std::to_string(classes - 1) + ", got " + std::to_string(k));
  const auto c = static_cast<double>(classes);
  const auto centring = torch::eye(classes, torch::kFloat64) - torch::full({classes, classes}, 1.0 / c, torch::kFloat64);
  torch::Tensor basis;  // K x C with P^T P = I (K >= C), or the K = C-1 equivalent of P (I - 11^T/C)
  if (k >= classes) {
    basis = orthonormal_columns(uniform_matrix(k, classes, rng)).matmul(centring);
  } else {
    // Columns 2..C of a QR of [1 | random] span the complement of 1; U U^T = I - 11^T/C.
    auto seed = torch::cat({torch::ones({classes, 1}, torch::kFloat64), uniform_matrix(classes, classes - 1, rng)}, 1);
    const auto u = orthonormal_columns(seed).narrow(1, 1, classes - 1);      // C x (C-1)
    const auto rotation = orthonormal_columns(uniform_matrix(k, k, rng));    // (C-1) x (C-1)
    basis = rotation.matmul(u.t());
  }
  return (std::sqrt(c / (c - 1.0)) * basis).to(torch::kFloat32);
}

torch::Tensor arcface_loss(const torch::Tensor& cosines, const torch::Tensor& labels, double scale, double margin) {
  constexpr double eps = 1e-7;
  const auto cos = cosines.clamp(-1.0 + eps, 1.0 - eps);
  const auto target = cos.gather(1, labels.view({-1, 1}));
  const auto shifted = torch::cos(torch::acos(target) + margin);
  const auto logits = scale * cos.scatter(1, labels.view({-1, 1}), shifted);
  return torch::nn::functional::cross_entropy(logits, labels);
}

torch::Tensor mmd_rbf(const torch::Tensor& x, const torch::Tensor& y, const std::vector<double>& bandwidths) {
  auto kernel = [&](const torch::Tensor& a, const torch::Tensor& b) {
    const auto d2 = torch::cdist(a, b).pow(2);
    auto k = torch::zeros_like(d2);
    for (double w : bandwidths) k = k + torch::exp(-d2 / (2.0 * w));
    return k.mean();
  };
  return kernel(x, x) + kernel(y, y) - 2.0 * kernel(x, y);
}

FeatureTransformerImpl::FeatureTransformerImpl(std::int64_t k, std::int64_t latent_dim)
    : first(register_module("first", torch::nn::Linear(k, k))),
      second(register_module("second", torch::nn::Linear(k, latent_dim))),
      norm(register_module("norm", torch::nn::BatchNorm1d(k))) {}

torch::Tensor FeatureTransformerImpl::forward(const torch::Tensor& prototypes) {
  return second(torch::relu(norm(first(prototypes))));
}

namespace {

// centroids[c] = mean of F(P) over the prototypes of class c, for every class present.
void reset_centroids(FeatureTransformer& transformer, torch::Tensor& centroids, const torch::Tensor& prototypes,
                     const torch::Tensor& labels) {
  torch::NoGradGuard no_grad;
  const bool was_training = transformer->is_training();
  transformer->eval();
  const auto mapped = transformer->forward(prototypes);
  transformer->train(was_training);
  const auto present = std::get<0>(torch::_unique(labels));
  for (std::int64_t i = 0; i < present.size(0); ++i) {
    const auto c = present[i].item<std::int64_t>();
    centroids[c].copy_(mapped.index({labels == c}).mean(0));
  }
}

}  // namespace

double align_latents(FeatureTransformer& transformer, torch::Tensor& centroids, const torch::Tensor& prototypes,
                     const torch::Tensor& labels, const std::function<torch::Tensor(std::int64_t)>& sample_latents,
                     const LatentAlignmentOptions& options, Rng& rng) {
  const auto n = prototypes.size(0);
  if (n == 0) return 0.0;
  reset_centroids(transformer, centroids, prototypes, labels);
  auto table = centroids.detach().clone().requires_grad_(true);
  std::vector<torch::Tensor> parameters = transformer->parameters();
  parameters.push_back(table);
  torch::optim::Adam optimizer(parameters, torch::optim::AdamOptions(options.lr).betas({0.9, 0.999}));
  transformer->train();
  double last_epoch_loss = 0.0;
  for (std::int64_t epoch = 0; epoch < options.epochs; ++epoch) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
    rng.shuffle(order);
    const auto index = torch::tensor(order, torch::kInt64);
    double total = 0.0;
    std::int64_t batches = 0;
    for (std::int64_t begin = 0; begin < n; begin += options.batch_size) {
      const auto size = std::min(options.batch_size, n - begin);
      if (size < 2) continue;  // BatchNorm1d cannot normalise a batch of one in training mode
      const auto rows = index.narrow(0, begin, size);
      const auto mapped = transformer->forward(prototypes.index_select(0, rows));
      const auto loss = mmd_rbf(mapped, sample_latents(size), options.bandwidths) +
                        options.lambda * torch::mse_loss(mapped, table.index_select(0, labels.index_select(0, rows)));
      optimizer.zero_grad();
      loss.backward();
      torch::nn::utils::clip_grad_norm_(parameters, options.grad_clip);
      optimizer.step();
      total += loss.item<double>();
      ++batches;
    }
    if (batches > 0) last_epoch_loss = total / static_cast<double>(batches);
  }
  {
    torch::NoGradGuard no_grad;
    centroids.copy_(table);
  }
  reset_centroids(transformer, centroids, prototypes, labels);
  return last_epoch_loss;
}

}  // namespace drift
