// A run's checkpoint as drift resume reads it (docs/checkpoints.md#integrity). The first byte
// picks what the rest of the input is:
//   0  state.bin, with a checkpoint.json whose checksums match it, so the bytes get past the
//      checksum to the state decoder, and then to the run directory's marks;
//   1  checkpoint.json itself, beside a fixed state.bin.
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/compose/checkpoint.hpp"
#include "engine/compose/loader.hpp"
#include "engine/compose/run_directory.hpp"
#include "engine/core/stream_hash.hpp"
#include "fuzz_input.hpp"

namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const char* data, std::size_t size) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(data, static_cast<std::streamsize>(size));
}

nlohmann::json checksums(const fs::path& dir) {
  nlohmann::json sums = nlohmann::json::object();
  for (const char* name : {"state.bin", "scenario.toml"}) {
    const auto hash = drift::hash_file(dir / name);
    sums[name] = {{"bytes", hash.bytes()}, {"hash", hash.hex()}};
  }
  return sums;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool json_itself = data[0] % 2 == 1;
  const auto* bytes = reinterpret_cast<const char*>(data + 1);
  --size;
  static const auto run = fs::temp_directory_path() / ("drift-fuzz-checkpoint-" + std::to_string(::getpid()));
  const auto dir = run / "checkpoint";
  fs::remove_all(run);
  fs::create_directories(dir);
  for (const char* f : {"metrics.jsonl", "clients.csv", "timings.jsonl"}) write(run / f, "", 0);
  const std::string scenario = "[federation]\nclients = 4\n";
  write(dir / "scenario.toml", scenario.data(), scenario.size());
  if (json_itself) {
    const std::string state = "not a state";
    write(dir / "state.bin", state.data(), state.size());
    write(dir / "checkpoint.json", bytes, size);
  } else {
    write(dir / "state.bin", bytes, size);
    const auto about = nlohmann::json{{"aggregation", 1}, {"checksums", checksums(dir)}}.dump();
    write(dir / "checkpoint.json", about.data(), about.size());
  }
  try {
    const auto stored = drift::read_checkpoint(run);
    if (!stored) return 0;
    const auto s = drift::parse_scenario(stored->scenario_toml, "fuzz.toml");
    drift::RunDirectory reopened(run, s, stored->checkpoint.files, drift::DirectoryLock(run, "fuzz"));
  } catch (const drift::DecodeError&) {
  } catch (const drift::UserError&) {
  }
  return 0;
}
