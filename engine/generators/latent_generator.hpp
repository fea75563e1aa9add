#pragma once
// The pre-trained generator FedKTL's server turns latent centroids into images with (docs/algorithms.md#fedktl).
// drift ships no third-party weights: a user exports one in a small TorchScript convention and
// points the scenario at the folder:
//   generator.json  {"z_dim", "c_dim", "latent_dim", "num_ws", "resolution", "range", "mapping"}
//   mapping.pt      forward(z [n, z_dim], c [n, c_dim]) -> w [n, latent_dim] (or [n, num_ws, latent_dim])
//                   absent, with "mapping": false, for a Gaussian sampler (Stable Diffusion's case)
//   synthesis.pt    forward(w [n, latent_dim], or [n, num_ws, latent_dim] when num_ws > 1)
//                   -> images [n, 3, resolution, resolution] in range ("[-1,1]" or "[0,1]")
// Loading probes both modules with a small batch, so a wrong shape or range is reported when
// the run starts, naming the file, not in the middle of a round.
#include <torch/torch.h>

#include <memory>
#include <string>

#include "engine/core/rng.hpp"

namespace drift {

struct GeneratorSpec {
  std::int64_t z_dim = 0;       // mapping input; unused without a mapping
  std::int64_t c_dim = 0;       // class-conditional mapping: one-hot classes; 0: unconditional
  std::int64_t latent_dim = 0;  // H, what the server aligns prototypes to
  std::int64_t num_ws = 1;      // StyleGAN's style inputs: synthesis gets w repeated num_ws times
  std::int64_t resolution = 0;  // output side
  bool unit_range = false;      // output in [0, 1] (else [-1, 1])
  bool mapping = true;          // false: latents are N(0, I)
};

class LatentGenerator {
 public:
  virtual ~LatentGenerator() = default;
  virtual const GeneratorSpec& spec() const = 0;
  // n latents the generator can turn into images, drawn from `rng` only.
  virtual torch::Tensor sample_valid_latents(std::int64_t n, Rng& rng) = 0;
  // [n, latent_dim] -> [n, 3, resolution, resolution] in the declared range, float32, CPU.
  virtual torch::Tensor synthesize(const torch::Tensor& latents) = 0;
};

// A generator drift makes itself from a seed, with no file: a random-weight MLP
// (latent_dim -> 256 -> 3 x resolution^2, sigmoid) behind a Gaussian sampler. The paper notes
// that FedKTL needs images that tell classes apart, not meaningful ones; this is the default
// when a scenario names no generator folder, and what the tests use.
std::unique_ptr<LatentGenerator> random_generator(std::int64_t latent_dim, std::int64_t resolution, std::uint64_t seed);

// Generated images [n, 3, R, R] in the generator's range -> the clients' input {C, H, W}:
// scaled to [0, 1], averaged to grey when the data has one channel, resized (bilinear) and
// normalised as the dataset is, (p - mean) / std.
torch::Tensor images_for_clients(const torch::Tensor& images, const GeneratorSpec& spec,
                                 const std::vector<std::int64_t>& input_shape, const std::vector<double>& pixel_mean,
                                 const std::vector<double>& pixel_std);

// `n` x `d` standard normal draws from `rng`, float32.
torch::Tensor gaussian_matrix(std::int64_t n, std::int64_t d, Rng& rng);

// Reads and checks generator.json only. Throws UserError naming the file and the key.
GeneratorSpec read_generator_spec(const std::string& directory);

// Loads and probes a generator folder. Throws UserError for a missing or unreadable file, a
// bad generator.json, or modules whose outputs have the wrong shape, are not finite or leave
// the declared range.
std::unique_ptr<LatentGenerator> load_generator(const std::string& directory);

}  // namespace drift
