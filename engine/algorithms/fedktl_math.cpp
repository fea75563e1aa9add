#include "engine/algorithms/fedktl_math.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace drift {

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

std::vector<double> median_bandwidths(const torch::Tensor& x, const torch::Tensor& y,
                                      const std::vector<double>& bandwidths) {
  torch::NoGradGuard no_grad;
  const auto all = torch::cat({x, y}).to(torch::kFloat64);
  const auto n = all.size(0);
  const auto d2 = torch::cdist(all, all).pow(2);
  const auto upper = d2.masked_select(torch::ones({n, n}, torch::kBool).triu(1));
  const double median = upper.numel() > 0 ? upper.median().item<double>() : 0.0;
  // 2 * 20 (the middle of the paper's set) maps onto the median distance.
  const double factor = median > 0.0 ? median / 40.0 : 1.0;
  std::vector<double> out;
  for (double w : bandwidths) out.push_back(w * factor);
  return out;
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
      const auto latents = sample_latents(size);
      const auto bandwidths = options.bandwidth_rule == BandwidthRule::median
                                  ? median_bandwidths(mapped, latents, options.bandwidths)
                                  : options.bandwidths;
      const auto loss = mmd_rbf(mapped, latents, bandwidths) +
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
