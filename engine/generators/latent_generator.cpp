#include "engine/generators/latent_generator.hpp"

#include <torch/script.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/core/error.hpp"
#include "engine/core/isolated_check.hpp"

namespace drift {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::int64_t positive(const json& j, const std::string& key, const std::string& file, bool required,
                      std::int64_t fallback) {
  if (!j.contains(key)) {
    if (required) throw UserError(file + ": missing \"" + key + "\" (a positive integer)");
    return fallback;
  }
  if (!j[key].is_number_integer() || j[key].get<std::int64_t>() < (required ? 1 : 0))
    throw UserError(file + ": \"" + key + "\" must be a " + (required ? "positive" : "non-negative") +
                    " integer, got " + j[key].dump());
  return j[key].get<std::int64_t>();
}

torch::jit::Module load_module(const fs::path& path) {
  if (!fs::exists(path)) throw UserError("generator file " + path.string() + " is missing");
  try {
    auto m = torch::jit::load(path.string(), torch::kCPU);
    m.eval();
    return m;
  } catch (const c10::Error& e) {
    throw UserError("cannot load " + path.string() + " as TorchScript: " + first_line(e.what_without_backtrace()));
  }
}

class TorchScriptGenerator final : public LatentGenerator {
 public:
  TorchScriptGenerator(const std::string& directory, GeneratorSpec spec) : directory_(directory), spec_(spec) {
    if (spec_.mapping) mapping_ = load_module(fs::path(directory) / "mapping.pt");
    synthesis_ = load_module(fs::path(directory) / "synthesis.pt");
  }

  const GeneratorSpec& spec() const override { return spec_; }

  torch::Tensor sample_valid_latents(std::int64_t n, Rng& rng) override {
    if (!spec_.mapping) return gaussian_matrix(n, spec_.latent_dim, rng);
    const auto z = gaussian_matrix(n, spec_.z_dim, rng);
    auto c = torch::zeros({n, spec_.c_dim});
    for (std::int64_t i = 0; i < n && spec_.c_dim > 0; ++i)
      c[i][static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(spec_.c_dim)))] = 1.0f;
    auto w = call(*mapping_, {z, c}, "mapping.pt");
    if (w.dim() == 3) w = w.select(1, 0);  // StyleGAN broadcasts one w to every style input
    expect(w.dim() == 2 && w.size(0) == n && w.size(1) == spec_.latent_dim, "mapping.pt",
           "[" + std::to_string(n) + ", " + std::to_string(spec_.latent_dim) + "] latents", w);
    return w;
  }

  torch::Tensor synthesize(const torch::Tensor& latents) override {
    const auto n = latents.size(0);
    auto w = latents.to(torch::kFloat32).contiguous();
    if (spec_.num_ws > 1) w = w.unsqueeze(1).expand({n, spec_.num_ws, spec_.latent_dim}).contiguous();
    auto images = call(synthesis_, {w}, "synthesis.pt");
    const auto r = spec_.resolution;
    expect(
        images.dim() == 4 && images.size(0) == n && images.size(1) == 3 && images.size(2) == r && images.size(3) == r,
        "synthesis.pt", "[" + std::to_string(n) + ", 3, " + std::to_string(r) + ", " + std::to_string(r) + "] images",
        images);
    if (!torch::isfinite(images).all().item<bool>())
      throw UserError(directory_ + "/synthesis.pt produced values that are not finite");
    const double lo = spec_.unit_range ? 0.0 : -1.0, tolerance = 1e-3;
    const double min = images.min().item<double>(), max = images.max().item<double>();
    if (min < lo - tolerance || max > 1.0 + tolerance)
      throw UserError(directory_ + "/synthesis.pt produced values in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "], outside the declared range " + (spec_.unit_range ? "[0,1]" : "[-1,1]"));
    return images.clamp(lo, 1.0);
  }

 private:
  torch::Tensor call(torch::jit::Module& module, std::vector<torch::jit::IValue> inputs, const char* file) {
    torch::NoGradGuard no_grad;
    // Op by op, as drift runs every TorchScript module (docs/torchscript.md#how-it-runs).
    torch::jit::GraphOptimizerEnabledGuard plain(false);
    try {
      auto out = module.forward(std::move(inputs));
      if (!out.isTensor()) throw UserError(directory_ + "/" + file + " must return one tensor");
      return out.toTensor().to(torch::kCPU, torch::kFloat32);
    } catch (const c10::Error& e) {
      throw UserError(directory_ + "/" + file + " failed: " + first_line(e.what_without_backtrace()));
    }
  }

  void expect(bool ok, const char* file, const std::string& wanted, const torch::Tensor& got) const {
    if (ok) return;
    std::string shape = "[";
    for (std::int64_t d = 0; d < got.dim(); ++d) shape += (d ? ", " : "") + std::to_string(got.size(d));
    throw UserError(directory_ + "/" + file + " returned shape " + shape + "], expected " + wanted);
  }

  std::string directory_;
  GeneratorSpec spec_;
  std::optional<torch::jit::Module> mapping_;
  torch::jit::Module synthesis_;
};

}  // namespace

GeneratorSpec read_generator_spec(const std::string& directory) {
  const auto path = (fs::path(directory) / "generator.json").string();
  std::ifstream in(path);
  if (!in) throw UserError("generator folder '" + directory + "' has no readable generator.json");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw UserError(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!j.is_object()) throw UserError(path + ": expected a JSON object");
  GeneratorSpec s;
  s.mapping = !j.contains("mapping") || j["mapping"] == true;
  if (j.contains("mapping") && !j["mapping"].is_boolean())
    throw UserError(path + ": \"mapping\" must be true or false");
  s.latent_dim = positive(j, "latent_dim", path, true, 0);
  s.resolution = positive(j, "resolution", path, true, 0);
  s.num_ws = positive(j, "num_ws", path, false, 1);
  if (s.num_ws == 0) s.num_ws = 1;
  s.z_dim = positive(j, "z_dim", path, s.mapping, 0);
  s.c_dim = positive(j, "c_dim", path, false, 0);
  if (j.contains("range") && !j["range"].is_string()) throw UserError(path + ": \"range\" must be a string");
  const auto range = j.value("range", std::string("[-1,1]"));
  if (range != "[-1,1]" && range != "[0,1]")
    throw UserError(path + ": \"range\" must be \"[-1,1]\" or \"[0,1]\", got \"" + range + "\"");
  s.unit_range = range == "[0,1]";
  return s;
}

class RandomMlpGenerator final : public LatentGenerator {
 public:
  RandomMlpGenerator(std::int64_t latent_dim, std::int64_t resolution, std::uint64_t seed) {
    spec_.latent_dim = latent_dim;
    spec_.resolution = resolution;
    spec_.unit_range = true;
    spec_.mapping = false;
    Rng rng = make_stream(seed, "random-generator");
    constexpr std::int64_t hidden = 256;
    first_ = gaussian_matrix(latent_dim, hidden, rng) / std::sqrt(static_cast<double>(latent_dim));
    second_ = gaussian_matrix(hidden, 3 * resolution * resolution, rng) / std::sqrt(static_cast<double>(hidden));
  }

  const GeneratorSpec& spec() const override { return spec_; }
  torch::Tensor sample_valid_latents(std::int64_t n, Rng& rng) override {
    return gaussian_matrix(n, spec_.latent_dim, rng);
  }
  torch::Tensor synthesize(const torch::Tensor& latents) override {
    torch::NoGradGuard no_grad;
    const auto r = spec_.resolution;
    return torch::sigmoid(torch::relu(latents.to(torch::kFloat32).matmul(first_)).matmul(second_))
        .view({latents.size(0), 3, r, r});
  }

 private:
  GeneratorSpec spec_;
  torch::Tensor first_, second_;
};

std::unique_ptr<LatentGenerator> random_generator(std::int64_t latent_dim, std::int64_t resolution,
                                                  std::uint64_t seed) {
  return std::make_unique<RandomMlpGenerator>(latent_dim, resolution, seed);
}

torch::Tensor images_for_clients(const torch::Tensor& images, const GeneratorSpec& spec,
                                 const std::vector<std::int64_t>& input_shape, const std::vector<double>& pixel_mean,
                                 const std::vector<double>& pixel_std) {
  if (input_shape.size() != 3 || (input_shape[0] != 1 && input_shape[0] != 3))
    throw std::invalid_argument("generated images can feed grey or RGB inputs only");
  auto unit = spec.unit_range ? images : (images + 1.0) / 2.0;
  if (input_shape[0] == 1) unit = unit.mean(1, /*keepdim=*/true);
  namespace F = torch::nn::functional;
  const auto resized = F::interpolate(unit, F::InterpolateFuncOptions()
                                                .size(std::vector<std::int64_t>{input_shape[1], input_shape[2]})
                                                .mode(torch::kBilinear)
                                                .align_corners(false));
  const auto unit_pixels = resized.clamp(0.0, 1.0);
  if (pixel_mean.size() == 1 && pixel_std.size() == 1)
    return ((unit_pixels - pixel_mean[0]) / pixel_std[0]).contiguous();
  // One value per channel.
  const auto per_channel = [&](const std::vector<double>& v) {
    if (v.size() != 1 && static_cast<std::int64_t>(v.size()) != input_shape[0])
      throw std::invalid_argument("normalisation needs one value or one per channel");
    return torch::tensor(v, torch::kFloat64).to(torch::kFloat32).view({1, -1, 1, 1});
  };
  return ((unit_pixels - per_channel(pixel_mean)) / per_channel(pixel_std)).contiguous();
}

torch::Tensor gaussian_matrix(std::int64_t n, std::int64_t d, Rng& rng) {
  auto t = torch::empty({n, d});
  auto a = t.accessor<float, 2>();
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) a[i][j] = static_cast<float>(rng.normal());
  return t;
}

std::unique_ptr<LatentGenerator> load_generator(const std::string& directory) {
  IsolatedCheck check;
  check.kind = IsolatedCheck::Kind::generator;
  check.path = directory;
  run_isolated_check(check);
  auto generator = std::make_unique<TorchScriptGenerator>(directory, read_generator_spec(directory));
  // A probe with a fixed stream: shapes and ranges are checked before any round needs them.
  Rng probe(stream_seed(0, "generator-probe"));
  generator->synthesize(generator->sample_valid_latents(2, probe));
  return generator;
}

}  // namespace drift
