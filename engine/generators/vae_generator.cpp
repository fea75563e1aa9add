#include "engine/generators/vae_generator.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/script.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"

namespace drift {
namespace {

// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) from the private generator, like drift's models.
torch::Tensor fan_in_uniform(std::vector<std::int64_t> shape, std::int64_t fan_in, at::Generator& gen) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return torch::empty(shape).uniform_(-bound, bound, gen).requires_grad_(true);
}

}  // namespace

void pretrain_vae_generator(const Dataset& train, const VaeGeneratorOptions& o, const std::string& directory,
                            const std::function<void(std::int64_t, double)>& progress) {
  if (o.latent_dim < 1 || o.hidden < 1 || o.resolution < 4 || o.epochs < 1 || o.batch_size < 1)
    throw UserError(
        "pretrain-generator: latent dimension, hidden width, epochs and batch size must be positive, "
        "resolution at least 4");
  if (train.size() < 2) throw UserError("pretrain-generator: the dataset has fewer than 2 images");
  const auto r = o.resolution, pixels = r * r;

  // Pixels back to [0,1] (the loader's normalisation is affine), grey, at the output size.
  auto images = train.images.mean(1, true);
  images = (images - images.min()) / (images.max() - images.min()).clamp_min(1e-12);
  images = torch::nn::functional::interpolate(images, torch::nn::functional::InterpolateFuncOptions()
                                                          .size(std::vector<std::int64_t>{r, r})
                                                          .mode(torch::kBilinear)
                                                          .align_corners(false))
               .clamp(0.0, 1.0)
               .reshape({train.size(), pixels})
               .contiguous();

  auto gen = at::make_generator<at::CPUGeneratorImpl>(stream_seed(o.seed, "generator-init"));
  torch::jit::Module decoder("DriftVaeDecoder");
  decoder.register_parameter("w1", fan_in_uniform({o.latent_dim, o.hidden}, o.latent_dim, gen), false);
  decoder.register_parameter("b1", fan_in_uniform({o.hidden}, o.latent_dim, gen), false);
  decoder.register_parameter("w2", fan_in_uniform({o.hidden, pixels}, o.hidden, gen), false);
  decoder.register_parameter("b2", fan_in_uniform({pixels}, o.hidden, gen), false);
  const auto side = std::to_string(r);
  decoder.define(
      "def forward(self, w):\n"
      "    h = torch.relu(torch.matmul(w, self.w1) + self.b1)\n"
      "    x = torch.sigmoid(torch.matmul(h, self.w2) + self.b2)\n"
      "    return x.view(-1, 1, " +
      side + ", " + side + ").repeat(1, 3, 1, 1)\n");

  // The encoder is only needed for training: plain tensors.
  auto e1 = fan_in_uniform({pixels, o.hidden}, pixels, gen), eb1 = fan_in_uniform({o.hidden}, pixels, gen);
  auto e2 = fan_in_uniform({o.hidden, 2 * o.latent_dim}, o.hidden, gen),
       eb2 = fan_in_uniform({2 * o.latent_dim}, o.hidden, gen);
  std::vector<torch::Tensor> parameters{e1, eb1, e2, eb2};
  for (const auto& p : decoder.parameters()) parameters.push_back(p);
  torch::optim::Adam optimizer(parameters, torch::optim::AdamOptions(o.lr));

  auto noise = at::make_generator<at::CPUGeneratorImpl>(stream_seed(o.seed, "generator-noise"));
  auto order_rng = make_stream(o.seed, "generator-batches");
  std::vector<std::int64_t> order(static_cast<std::size_t>(train.size()));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(i);
  // The decoder runs op by op, as drift runs every TorchScript module: the executor's fuser
  // would round later batches unlike the first ones, and a LibTorch built with LLVM (Debian
  // 13's) can spend minutes compiling each fused kernel (docs/torchscript.md#how-it-runs).
  torch::jit::GraphOptimizerEnabledGuard plain(false);
  for (std::int64_t epoch = 1; epoch <= o.epochs; ++epoch) {
    order_rng.shuffle(order);
    const auto index = torch::tensor(order, torch::kInt64);
    double total = 0.0;
    for (std::int64_t begin = 0; begin < train.size(); begin += o.batch_size) {
      const auto size = std::min(o.batch_size, train.size() - begin);
      const auto x = images.index_select(0, index.narrow(0, begin, size));
      const auto stats = torch::matmul(torch::relu(torch::matmul(x, e1) + eb1), e2) + eb2;
      const auto mu = stats.narrow(1, 0, o.latent_dim), log_var = stats.narrow(1, o.latent_dim, o.latent_dim);
      const auto eps = at::randn({size, o.latent_dim}, noise, torch::TensorOptions().dtype(torch::kFloat32));
      const auto z = mu + torch::exp(0.5 * log_var) * eps;
      const auto decoded = decoder.forward({z}).toTensor().select(1, 0).reshape({size, pixels});
      const auto reconstruction = torch::binary_cross_entropy(decoded.clamp(1e-6, 1 - 1e-6), x, {}, at::Reduction::Sum);
      const auto kl = -0.5 * torch::sum(1 + log_var - mu.pow(2) - log_var.exp());
      const auto loss = (reconstruction + kl) / static_cast<double>(size);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      total += loss.item<double>() * static_cast<double>(size);
    }
    if (progress) progress(epoch, total / static_cast<double>(train.size()));
  }

  std::filesystem::create_directories(directory);
  for (const auto& p : decoder.parameters()) p.requires_grad_(false);
  decoder.eval();
  decoder.save((std::filesystem::path(directory) / "synthesis.pt").string());
  const nlohmann::json spec = {
      {"latent_dim", o.latent_dim}, {"resolution", r},  {"num_ws", 1},
      {"range", "[0,1]"},           {"mapping", false}, {"made_by", "drift pretrain-generator (VAE)"},
      {"epochs", o.epochs},         {"seed", o.seed}};
  std::ofstream((std::filesystem::path(directory) / "generator.json")) << spec.dump(2) << "\n";
}

}  // namespace drift
