#pragma once
// The mathematical pieces of FedKTL (docs/algorithms.md#fedktl), plain LibTorch and testable alone: the
// simplex ETF the clients project onto, the ArcFace loss on ETF cosines, the RBF MMD, and the
// server's feature transformer with its centroid table. The algorithm that wires them to
// heterogeneous client models and a latent generator builds on these.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/config/choices.hpp"
#include "engine/core/rng.hpp"
#include "engine/models/simplex_etf.hpp"

namespace drift {

// ArcFace on cosines [n, C]: -log softmax with s*cos(theta_y + m) for the true class and
// s*cos(theta_c) for the others, averaged over the batch. Cosines are clamped to
// [-1 + 1e-7, 1 - 1e-7] first: acos has an infinite gradient at +-1, and rounding can push a
// cosine past 1 (NaN), which the authors' code does not guard.
torch::Tensor arcface_loss(const torch::Tensor& cosines, const torch::Tensor& labels, double scale, double margin);

// Biased RBF MMD^2 between samples x [n, H] and y [m, H]: mean K(x,x) + mean K(y,y) - 2 mean K(x,y),
// all entries including the diagonal, with K(a,b) = sum over bandwidths w of exp(-|a-b|^2 / (2w)).
torch::Tensor mmd_rbf(const torch::Tensor& x, const torch::Tensor& y,
                      const std::vector<double>& bandwidths = {10.0, 15.0, 20.0, 50.0});

// The bandwidths scaled so that the median pairwise squared distance of x and y together
// (detached) sits where 2 * 20 sits for the fixed set: {10, 15, 20, 50} fit StyleGAN-XL's
// H = 512, but for large H (Stable Diffusion's 16384) every kernel entry underflows and the
// MMD gradient vanishes (docs/algorithms.md#fedktl). Scale-free: MMD(kx, ky) is the same for every k > 0.
std::vector<double> median_bandwidths(const torch::Tensor& x, const torch::Tensor& y,
                                      const std::vector<double>& bandwidths = {10.0, 15.0, 20.0, 50.0});

// F: Linear(K,K) -> BatchNorm1d(K) -> ReLU -> Linear(K,H), which maps prototypes in ETF space
// to the generator's latent space.
struct FeatureTransformerImpl : torch::nn::Module {
  FeatureTransformerImpl(std::int64_t k, std::int64_t latent_dim);
  torch::Tensor forward(const torch::Tensor& prototypes);
  torch::nn::Linear first{nullptr}, second{nullptr};
  torch::nn::BatchNorm1d norm{nullptr};
};
TORCH_MODULE(FeatureTransformer);

// The RBF bandwidths of the MMD: as given (`fixed`), or rescaled per batch to the median
// distance (`median`, median_bandwidths()).
enum class BandwidthRule { fixed, median };

struct LatentAlignmentOptions {
  std::int64_t epochs = 100;      // E_S
  std::int64_t batch_size = 100;  // B_S
  double lr = 0.01;               // eta_S (Adam, betas 0.9 / 0.999)
  double lambda = 1.0;            // weight of the MSE to the centroid table
  double grad_clip = 100.0;
  std::vector<double> bandwidths{10.0, 15.0, 20.0, 50.0};
  BandwidthRule bandwidth_rule = BandwidthRule::fixed;
};

// The server's step of one round (docs/algorithms.md#fedktl). `centroids` [C, H] persists across
// rounds; classes present among `labels` are set to their mean of F(P) before and after
// training, the others keep their values. Per shuffled batch: MMD(F(P_b), W_b) +
// lambda * MSE(F(P_b), centroids[y_b]) with W_b = sample_latents(|P_b|). A final batch of one
// prototype is skipped (BatchNorm cannot train on it). Returns the mean loss of the last epoch
// (0 when no batch ran).
double align_latents(FeatureTransformer& transformer, torch::Tensor& centroids, const torch::Tensor& prototypes,
                     const torch::Tensor& labels, const std::function<torch::Tensor(std::int64_t)>& sample_latents,
                     const LatentAlignmentOptions& options, Rng& rng);

template <>
struct ChoiceNames<BandwidthRule> {
  static constexpr std::array<std::string_view, 2> names{"fixed", "median"};
};

}  // namespace drift
