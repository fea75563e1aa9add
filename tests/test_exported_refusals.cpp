// The committed programs drift cannot train as promised, and files that are no program at all,
// each refused with its reason where a run would meet it: reading the file (validation), the
// scenario around it (validation), or building the model on a probe batch (the isolated check
// in a run). tests/fixtures/exported/write_programs.py wrote the programs; cli_exported proves
// one refusal of each kind through the CLI (exit 2, one line, no run directory).
#include <sys/stat.h>
#include <torch/version.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "catch_torch.hpp"
#include "engine/core/error.hpp"
#include "engine/models/exported_model.hpp"
#include "engine/models/model.hpp"
#include "scenario_error.hpp"

using namespace drift;

namespace {

namespace fs = std::filesystem;

const std::string kFixtures = DRIFT_SOURCE_DIR "/tests/fixtures/exported/";
const std::string kExamples = DRIFT_SOURCE_DIR "/docs/examples/exported/";

std::string inspected(const std::string& path) {
  return test::refusal_of([&] { inspect_exported_program(path); });
}

// Built for fashion-mnist's samples and 10 classes, as the isolated check builds it.
std::string built(const std::string& file) {
  return test::refusal_of([&] {
    ModelOptions options;
    options.script_file = kFixtures + file;
    options.script_digest = inspect_exported_program(options.script_file).digest;
    make_model("exported", {1, 28, 28}, 10, 1, options);
  });
}

// A scenario training the program `file` (with more TOML after it).
std::string scenario_with(const std::string& file, const std::string& more = "") {
  return "[model]\nname = \"exported\"\nfile = \"" + file + "\"\ninit = \"seed\"\n" + more;
}

}  // namespace

TEST_CASE("programs drift cannot read safely are refused when the file is read") {
  CHECK_THAT(inspected(kFixtures + "dropout.pt2"), Catch::Contains("forward(x) draws random numbers (aten::dropout)"));
  CHECK_THAT(inspected(kFixtures + "static_batch.pt2"), Catch::Contains("exported for batches of exactly 4 samples"));
  CHECK_THAT(inspected(kFixtures + "schema9.pt2"),
             Catch::Contains("schema version 9.2 (by PyTorch 2.6.0") && Catch::Contains("and drift reads version 8.x"));
  CHECK_THAT(inspected(kFixtures + "global.pt2"), Catch::Contains("names the global 'posix system'"));
  CHECK_THAT(inspected(kFixtures + "deep.pt2"), Catch::Contains("JSON nests deeper than 100 levels"));
  CHECK_THAT(inspected(kFixtures + "bomb.pt2"), Catch::Contains("declares 104857600 bytes, more than"));
  CHECK_THAT(inspected(DRIFT_SOURCE_DIR "/tests/fixtures/pytorch26/gelu_tanh.pt"),
             Catch::Contains("a TorchScript module or torch.save file") && Catch::Contains("model \"torchscript\""));
  CHECK_THAT(inspected(kExamples + "export_models.py"),
             Catch::Contains("not an exported program (torch.export.save writes a zip archive"));
  CHECK_THAT(inspected(kFixtures + "missing.pt2"), Catch::Contains("cannot open an exported program"));
#if TORCH_VERSION_MAJOR < 2
  // Ops newer than this LibTorch are named, with the PyTorch that wrote the file.
  CHECK_THAT(inspected(kFixtures + "rms_norm.pt2"), Catch::Contains("calls aten::rms_norm, which LibTorch"));
  CHECK_THAT(inspected(kFixtures + "functional_bn.pt2"),
             Catch::Contains("calls aten::_native_batch_norm_legit_functional, which LibTorch"));
#else
  CHECK(inspected(kFixtures + "rms_norm.pt2").empty());
  CHECK(inspected(kFixtures + "functional_bn.pt2").empty());
#endif
}

TEST_CASE("files that are no program are refused before they are read") {
  // A device that never ends, a FIFO that would wait for a writer, 2 GB of zeros: each refused
  // without reading (a read would hang this test or take seconds).
  const fs::path dir = fs::temp_directory_path() / ("drift_test_exported_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto fifo = (dir / "fifo.pt2").string(), zeros = (dir / "zeros.pt2").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::ofstream{zeros}.close();
  fs::resize_file(zeros, 2'000'000'000);
  CHECK_THAT(inspected("/dev/zero"), Catch::Contains("is not a regular file"));
  CHECK_THAT(inspected(fifo), Catch::Contains("is not a regular file"));
  CHECK_THAT(inspected(zeros), Catch::Contains("not an exported program (torch.export.save writes a zip archive"));
  fs::remove_all(dir);
}

TEST_CASE("programs that cannot train are refused when built on a probe batch") {
  CHECK_THAT(built("seven.pt2"),
             Catch::Contains("forward(x) gives logits of [2, 7] for a batch of [2, 1, 28, 28]; the dataset has 10 "
                             "classes, so they must be [2, 10]"));
  CHECK_THAT(built("int_logits.pt2"), Catch::Contains("Long logits; they must be floating point"));
  CHECK_THAT(built("frozen.pt2"), Catch::Contains("no trainable parameters"));
  CHECK(built("tiny.pt2").empty());
}

TEST_CASE("a program that does not fit the scenario around it is refused at validation") {
  using test::error_of;
  CHECK_THAT(error_of(scenario_with(kFixtures + "small_batch.pt2")),
             Catch::Contains("takes batches of up to 16 samples") && Catch::Contains("feeds batches of 500"));
  CHECK_THAT(error_of(scenario_with(kFixtures + "large_batch.pt2")),
             Catch::Contains("takes batches of at least 8 samples") && Catch::Contains("down to one sample"));
  CHECK_THAT(error_of(scenario_with(kFixtures + "tiny.pt2", "[algorithm]\nname = \"moon\"\n")),
             Catch::Contains("reads the model's features") && Catch::Contains("return (logits, features)"));
  CHECK_THAT(error_of(scenario_with(kExamples + "resnet8.pt2", "[algorithm]\nname = \"fedrcl\"\n")),
             Catch::Contains("reads the pooled output of every stage"));
}
