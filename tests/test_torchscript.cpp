// Models brought as TorchScript files: the module written from C++ copies drift's small-cnn,
// so each check has an exact reference in the built-in model.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "catch_torch.hpp"
#include "engine/core/error.hpp"
#include "engine/models/model.hpp"
#include "engine/models/script_archive.hpp"
#include "engine/models/torchscript_model.hpp"
#include "engine/tensors/named_tensors.hpp"
#include "scenario_error.hpp"
#include "tools/script_modules/script_modules.hpp"

using namespace drift;

namespace {

namespace fs = std::filesystem;

struct ScriptFile {
  fs::path path;
  std::string digest;
  explicit ScriptFile(const std::string& name, const script_modules::SmallCnnShape& shape = {})
      : path(fs::temp_directory_path() / ("drift_test_" + std::to_string(::getpid()) + "_" + name + ".pt")) {
    script_modules::small_cnn(shape).save(path.string());
    digest = inspect_script_module(path.string()).digest;
  }
  ~ScriptFile() { fs::remove(path); }
  ModelOptions options(bool file_weights = false) const {
    ModelOptions o;
    o.script_file = path.string();
    o.script_digest = digest;
    o.script_weights = file_weights;
    return o;
  }
};

void check_same_state(const NamedTensors& a, const NamedTensors& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].name);
    CHECK(a[i].name == b[i].name);
    CHECK(torch::equal(a[i].value, b[i].value));
  }
}

}  // namespace

TEST_CASE("a torchscript copy of small-cnn drawn from the seed is the built-in model, bit for bit", "[torchscript]") {
  const ScriptFile file("copy");
  const auto script = make_model("torchscript", {1, 28, 28}, 10, 7, file.options());
  const auto builtin = make_model("small-cnn", {1, 28, 28}, 10, 7);
  check_same_state(state_of(*script), state_of(*builtin));
  const auto x = torch::rand({5, 1, 28, 28});
  CHECK(torch::equal(script->forward(x).logits, builtin->forward(x).logits));
  CHECK_FALSE(script->forward(x).features.defined());  // logits only: no algorithm reads features

  SECTION("a training step moves the very tensors the module computes with") {
    for (auto* m : {script.get(), builtin.get()}) {
      torch::optim::SGD sgd(m->parameters(), torch::optim::SGDOptions(0.1));
      auto loss = torch::nn::functional::cross_entropy(m->forward(x).logits, torch::tensor({0, 1, 2, 3, 4}));
      loss.backward();
      sgd.step();
    }
    check_same_state(state_of(*script), state_of(*builtin));
    CHECK(torch::equal(script->forward(x).logits, builtin->forward(x).logits));
    load_state(*script, state_of(*make_model("small-cnn", {1, 28, 28}, 10, 9)));
    CHECK(torch::equal(script->forward(x).logits, make_model("small-cnn", {1, 28, 28}, 10, 9)->forward(x).logits));
  }
}

TEST_CASE("a torchscript module read through features(x) carries drift's head", "[torchscript]") {
  const ScriptFile file("backbone");
  auto options = file.options();
  options.projection_dim = 32;  // MOON's projection
  const auto script = make_model("torchscript", {1, 28, 28}, 10, 3, options);
  ModelOptions builtin_options;
  builtin_options.projection_dim = 32;
  const auto builtin = make_model("small-cnn", {1, 28, 28}, 10, 3, builtin_options);
  // The module's own head is not read by features(x), so it is not part of drift's model.
  check_same_state(state_of(*script), state_of(*builtin));
  const auto x = torch::rand({3, 1, 28, 28});
  const auto a = script->forward(x), b = builtin->forward(x);
  CHECK(torch::equal(a.features, b.features));
  CHECK(torch::equal(a.logits, b.logits));
  CHECK(script->feature_dim() == 32);
}

TEST_CASE("a torchscript model keeps the file's weights unless told to draw them", "[torchscript]") {
  const ScriptFile file("weights");
  const auto kept = make_model("torchscript", {1, 28, 28}, 10, 3, file.options(/*file_weights=*/true));
  for (const auto& t : state_of(*kept)) CHECK(t.value.abs().sum().item<double>() == 0.0);  // the file's zeros
  const auto drawn = make_model("torchscript", {1, 28, 28}, 10, 3, file.options(false));
  CHECK(state_of(*drawn)[0].value.abs().sum().item<double>() > 0.0);
}

TEST_CASE("torchscript files that cannot serve are refused with one line", "[torchscript]") {
  const ScriptFile file("refusals");
  const auto path = file.path.string();
  SECTION("a foreign or truncated file") {
    const auto foreign = fs::temp_directory_path() / "drift_test_foreign.pt";
    std::ofstream(foreign) << "not a module";
    auto why = test::refusal_of([&] { inspect_script_module(foreign.string()); });
    CHECK(why.find("not a TorchScript module") != std::string::npos);
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    why = test::refusal_of([&] { inspect_script_bytes(bytes.substr(0, bytes.size() / 2), "half.pt"); });
    CHECK(why.rfind("half.pt: not a TorchScript module", 0) == 0);
    CHECK(why.find('\n') == std::string::npos);
    fs::remove(foreign);
    CHECK(test::refusal_of([&] { inspect_script_module("/nonexistent/net.pt"); }).find("cannot open") !=
          std::string::npos);
  }
  SECTION("an archive whose sizes lie, checked before LibTorch allocates what they claim") {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK_NOTHROW(check_script_archive(bytes, "net.pt"));
    // data.pkl is stored as it is: its first string, "conv1", gets a length of 2 GB.
    auto lying = bytes;
    const auto at =
        lying.find(std::string("X\x05\x00\x00\x00"
                               "conv1",
                               10));
    REQUIRE(at != std::string::npos);
    lying.replace(at + 1, 4, std::string("\xff\xff\xff\x7f", 4));
    auto why = test::refusal_of([&] { check_script_archive(lying, "lying.pt"); });
    CHECK(why.find("data.pkl declares 2147483647 bytes where") != std::string::npos);
    CHECK(test::refusal_of([&] { inspect_script_bytes(lying, "lying.pt"); }) == why);
    CHECK(test::refusal_of([&] {
            check_script_archive(bytes.substr(0, bytes.size() - 30), "cut.pt");
          }).find("no end of the zip's central directory") != std::string::npos);
  }
  SECTION("a module whose logits do not match the classes") {
    const auto why = test::refusal_of([&] { make_model("torchscript", {1, 28, 28}, 7, 1, file.options()); });
    CHECK(why.find("forward(x) gives [2, 10] for a batch of [2, 1, 28, 28]; the dataset has 7 classes") !=
          std::string::npos);
  }
  SECTION("a module that fails on the dataset's shape") {
    const auto why = test::refusal_of([&] { make_model("torchscript", {3, 32, 32}, 10, 1, file.options()); });
    CHECK(why.find("fails on a batch of the dataset's shape") != std::string::npos);
    CHECK(why.find('\n') == std::string::npos);
  }
  SECTION("a file whose digest is not the scenario's") {
    auto options = file.options();
    options.script_digest = "0123456789abcdef";
    CHECK(test::refusal_of([&] {
            make_model("torchscript", {1, 28, 28}, 10, 1, options);
          }).find("the file changed since") != std::string::npos);
  }
  SECTION("features asked of a module without them") {
    const ScriptFile plain("plain", {1, 28, 10, false});
    auto options = plain.options();
    options.script_backbone = true;
    CHECK_FALSE(inspect_script_module(plain.path.string()).has_features);
    CHECK(test::refusal_of([&] {
            make_model("torchscript", {1, 28, 28}, 10, 1, options);
          }).find("no method features(x)") != std::string::npos);
  }
}
