#pragma once
// `drift pretrain-generator`: a small generator drift trains itself, so that FedKTL can run with
// no third-party weights. A VAE on a dataset available offline; its decoder is written as
// TorchScript (Module::define) and trained in place, so the export is the trained module
// itself, in the generator convention: synthesis.pt + generator.json with a Gaussian sampler
// (the VAE's prior) and range [0,1]. Grey images are repeated over three channels.
#include <cstdint>
#include <functional>
#include <string>

#include "engine/data/dataset.hpp"

namespace drift {

struct VaeGeneratorOptions {
  std::int64_t latent_dim = 64;
  std::int64_t hidden = 256;
  std::int64_t resolution = 32;
  std::int64_t epochs = 5;
  std::int64_t batch_size = 128;
  double lr = 1e-3;
  std::uint64_t seed = 1;
};

// Trains on `train` (any normalisation: it is undone by min-max scaling to [0,1]) and writes
// `directory`/synthesis.pt and generator.json. `progress(epoch, mean loss per image)` after each
// epoch. Everything random (initial weights, batch order, noise) comes from `seed`.
void pretrain_vae_generator(const Dataset& train, const VaeGeneratorOptions& options, const std::string& directory,
                            const std::function<void(std::int64_t, double)>& progress);

}  // namespace drift
