// Generators in drift's TorchScript convention, exported here from C++ (Module::define), then
// loaded, probed and used; each kind of malformed export is refused with the file named.
#include "catch_torch.hpp"

#include <torch/script.h>

#include <filesystem>
#include <fstream>

#include "engine/core/error.hpp"
#include "engine/generators/latent_generator.hpp"

using namespace drift;
namespace fs = std::filesystem;

namespace {

struct Export {
  fs::path dir;
  explicit Export(const std::string& name) : dir(fs::temp_directory_path() / ("drift_generator_" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Export() { fs::remove_all(dir); }
  void json(const std::string& text) const { std::ofstream(dir / "generator.json") << text; }
  // mapping: z [n, 4] (+ c [n, 2]) -> w [n, 3] through a fixed matrix.
  void mapping(const std::string& body = "return torch.matmul(z, self.a) + torch.matmul(c, self.b)") const {
    torch::jit::Module m("Mapping");
    m.register_parameter("a", torch::ones({4, 3}) * 0.1, false);
    m.register_parameter("b", torch::ones({2, 3}), false);
    m.define("def forward(self, z, c):\n    " + body + "\n");
    m.save((dir / "mapping.pt").string());
  }
  // synthesis: w [n, 3] -> tanh(w P) viewed as [n, 3, 4, 4], in [-1, 1].
  void synthesis(const std::string& body = "return torch.tanh(torch.matmul(w, self.p)).view(-1, 3, 4, 4)") const {
    torch::jit::Module m("Synthesis");
    m.register_parameter("p", torch::linspace(-1, 1, 3 * 48).view({3, 48}), false);
    m.define("def forward(self, w):\n    " + body + "\n");
    m.save((dir / "synthesis.pt").string());
  }
};

const char* kSpec = R"({"z_dim": 4, "c_dim": 2, "latent_dim": 3, "num_ws": 1, "resolution": 4, "range": "[-1,1]"})";

}  // namespace

TEST_CASE("a generator exported in drift's convention loads, samples and synthesises", "[generator]") {
  Export e("good");
  e.json(kSpec);
  e.mapping();
  e.synthesis();
  auto g = load_generator(e.dir.string());
  CHECK(g->spec().latent_dim == 3);
  CHECK(g->spec().c_dim == 2);
  CHECK(g->spec().mapping);
  auto rng = make_stream(5, "latents");
  const auto w = g->sample_valid_latents(6, rng);
  CHECK(w.sizes() == torch::IntArrayRef({6, 3}));
  const auto images = g->synthesize(w);
  CHECK(images.sizes() == torch::IntArrayRef({6, 3, 4, 4}));
  CHECK(images.abs().max().item<double>() <= 1.0);
  // Latents come from the stream alone.
  auto again = make_stream(5, "latents");
  CHECK(torch::equal(w, g->sample_valid_latents(6, again)));
}

TEST_CASE("a Gaussian sampler may stand in for the mapping", "[generator]") {
  Export e("gaussian");
  e.json(R"({"latent_dim": 3, "resolution": 4, "mapping": false})");
  e.synthesis();
  auto g = load_generator(e.dir.string());
  CHECK_FALSE(g->spec().mapping);
  auto rng = make_stream(1, "latents");
  CHECK(g->synthesize(g->sample_valid_latents(3, rng)).size(0) == 3);
}

TEST_CASE("malformed generators are refused with the file and the reason", "[generator]") {
  Export e("bad");
  CHECK_THROWS_WITH(load_generator(e.dir.string()), Catch::Contains("has no readable generator.json"));
  e.json("{ not json");
  CHECK_THROWS_WITH(load_generator(e.dir.string()), Catch::Contains("not valid JSON"));
  e.json(R"({"z_dim": 4, "resolution": 4})");
  CHECK_THROWS_WITH(load_generator(e.dir.string()), Catch::Contains("missing \"latent_dim\""));
  e.json(R"({"z_dim": 4, "latent_dim": 3, "resolution": 4, "range": "[0,255]"})");
  CHECK_THROWS_WITH(load_generator(e.dir.string()), Catch::Contains("\"range\" must be"));
  e.json(R"({"z_dim": -4, "latent_dim": 3, "resolution": 4})");
  CHECK_THROWS_WITH(load_generator(e.dir.string()), Catch::Contains("\"z_dim\" must be a positive integer"));

  e.json(kSpec);
  CHECK_THROWS_WITH(load_generator(e.dir.string()), Catch::Contains("mapping.pt is missing"));
  std::ofstream(e.dir / "mapping.pt") << "not a zip archive";
  CHECK_THROWS_WITH(load_generator(e.dir.string()), Catch::Contains("cannot load") && Catch::Contains("mapping.pt"));
  e.mapping("return torch.matmul(z, self.a)[:, :2]");  // latents of the wrong width
  e.synthesis();
  CHECK_THROWS_WITH(load_generator(e.dir.string()),
                    Catch::Contains("mapping.pt returned shape [2, 2], expected [2, 3] latents"));
  e.mapping();
  e.synthesis("return torch.tanh(torch.matmul(w, self.p)).view(-1, 3, 2, 8)");  // not square
  CHECK_THROWS_WITH(load_generator(e.dir.string()), Catch::Contains("synthesis.pt returned shape [2, 3, 2, 8]"));
  e.synthesis("return 10.0 * torch.matmul(w, self.p).view(-1, 3, 4, 4)");  // outside [-1, 1]
  CHECK_THROWS_WITH(load_generator(e.dir.string()), Catch::Contains("outside the declared range [-1,1]"));
  e.synthesis("return torch.log(torch.matmul(w, self.p) - 100.0).view(-1, 3, 4, 4)");  // NaN
  CHECK_THROWS_WITH(load_generator(e.dir.string()), Catch::Contains("not finite"));
  CHECK_THROWS_AS(load_generator(e.dir.string()), UserError);
}
