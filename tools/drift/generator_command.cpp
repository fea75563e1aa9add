#include <chrono>
#include <cstdio>
#include <filesystem>

#include "commands.hpp"
#include "engine/core/error.hpp"
#include "engine/data/dataset.hpp"
#include "engine/generators/latent_generator.hpp"
#include "engine/generators/vae_generator.hpp"

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
              static_cast<long long>(s.resolution), static_cast<long long>(s.resolution),
              s.unit_range ? "[0,1]" : "[-1,1]");
  std::printf("  4 probe images: values in [%.3f, %.3f]; loaded and probed in %.2f s\n", images.min().item<double>(),
              images.max().item<double>(), seconds);
  return 0;
}

}  // namespace drift::cli

namespace drift::cli {

int pretrain_generator_command(const PretrainGeneratorArgs& args) {
  namespace fs = std::filesystem;
  if (fs::exists(args.out) && !(fs::is_directory(args.out) && fs::is_empty(args.out)))
    throw UserError("--out '" + args.out + "' already exists and is not an empty folder");
  DataConfig data;
  data.dataset = args.dataset;
  data.path = args.data_path;
  data.max_train_samples = args.max_samples;
  check_dataset_files(data);
  const auto train = load_dataset(data).train;
  VaeGeneratorOptions o;
  o.latent_dim = args.latent_dim;
  o.resolution = args.resolution;
  o.epochs = args.epochs;
  o.seed = args.seed;
  std::printf("training a VAE generator on %lld %s images (%lld x %lld, latent %lld) for %lld epoch(s)\n",
              static_cast<long long>(train->size()), args.dataset.c_str(), static_cast<long long>(o.resolution),
              static_cast<long long>(o.resolution), static_cast<long long>(o.latent_dim),
              static_cast<long long>(o.epochs));
  const auto started = std::chrono::steady_clock::now();
  pretrain_vae_generator(*train, o, args.out, [&](std::int64_t epoch, double loss) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("  epoch %lld/%lld: loss %.2f per image (%.1f s)\n", static_cast<long long>(epoch),
                static_cast<long long>(o.epochs), loss, s);
    std::fflush(stdout);
  });
  load_generator(args.out);  // the export must pass the same checks as a user's
  std::printf("exported to %s (generator.json, synthesis.pt); drift check-generator %s shows it\n", args.out.c_str(),
              args.out.c_str());
  return 0;
}

}  // namespace drift::cli
