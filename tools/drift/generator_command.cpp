#include <chrono>
#include <cstdio>

#include "commands.hpp"
#include "engine/generators/latent_generator.hpp"

namespace drift::cli {

int check_generator_command(const std::string& directory) {
  const auto started = std::chrono::steady_clock::now();
  auto generator = load_generator(directory);  // probes shapes and ranges; UserError on any problem
  const auto& s = generator->spec();
  auto rng = make_stream(1, "generator-check");
  const auto images = generator->synthesize(generator->sample_valid_latents(4, rng));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("generator %s: ok\n", directory.c_str());
  if (s.mapping)
    std::printf("  mapping: z %lld, classes %lld -> latent %lld\n", static_cast<long long>(s.z_dim),
                static_cast<long long>(s.c_dim), static_cast<long long>(s.latent_dim));
  else
    std::printf("  latents: N(0, I) of dimension %lld (no mapping)\n", static_cast<long long>(s.latent_dim));
  std::printf("  synthesis: %lld style input(s) -> 3 x %lld x %lld images in %s\n", static_cast<long long>(s.num_ws),
              static_cast<long long>(s.resolution), static_cast<long long>(s.resolution), s.unit_range ? "[0,1]" : "[-1,1]");
  std::printf("  4 probe images: values in [%.3f, %.3f]; loaded and probed in %.2f s\n", images.min().item<double>(),
              images.max().item<double>(), seconds);
  return 0;
}

}  // namespace drift::cli
