#include "engine/compose/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "engine/compose/atomic_file.hpp"
#include "engine/compose/fingerprint.hpp"
#include "engine/core/error.hpp"
#include "engine/core/remove_tree.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/core/stream_hash.hpp"
#include "engine/core/version.hpp"

namespace drift {
namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "drift checkpoint 2";

// state.bin: the numbers, then the three states as texts.
void archive_numbers(StateArchive& ar, Checkpoint& c) {
  ar.section(kFormat);
  ar.value(c.round);
  ar.value(c.virtual_time);
  ar.value(c.wall_seconds);
}

std::array<std::string*, 3> states_of(Checkpoint& c) { return {&c.driver, &c.sampler, &c.files}; }

void read_checkpoint_archive(StateArchive& ar, Checkpoint& c) {
  archive_numbers(ar, c);
  for (auto* state : states_of(c)) ar.text(*state);
}

// Writes state.bin as read_checkpoint_archive reads it, each state straight from its string: the
// driver's state can be gigabytes (a MIFA table held in memory), and an archive that copied it
// would double the run's memory at every checkpoint (docs/algorithms.md#tables-on-disk).
void write_state_file(const fs::path& path, Checkpoint& c) {
  auto numbers = StateArchive::writer();
  archive_numbers(numbers, c);
  const auto states = states_of(c);
  std::array<std::string, 3> prefixes;
  for (std::size_t k = 0; k < states.size(); ++k) {
    auto prefix = StateArchive::writer();
    prefix.text_prefix(*states[k]);
    prefixes[k] = prefix.take();
  }
  std::vector<std::string_view> parts{numbers.bytes()};
  for (std::size_t k = 0; k < states.size(); ++k) parts.insert(parts.end(), {prefixes[k], *states[k]});
  write_file_atomically(path, parts);
}

// Flushes the files a writer left in `directory` (not its subdirectories) to the disk.
void sync_files(const fs::path& directory) {
  for (const auto& e : fs::directory_iterator(directory)) {
    if (!e.is_regular_file()) continue;
    const int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const int rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0 && errno != EINVAL) throw WriteError(e.path().string() + ": cannot write: " + std::strerror(errno));
  }
}

std::uint64_t bytes_under(const fs::path& directory) {
  std::uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(directory))
    if (e.is_regular_file()) total += e.file_size();
  return total;
}

void remove_all_or_throw(const fs::path& p) {
  std::error_code ec;
  remove_tree(p, ec);
  if (ec) throw WriteError(p.string() + ": cannot remove: " + ec.message());
}

// Every file of a checkpoint directory but checkpoint.json, by its path relative to it.
std::vector<fs::path> checkpoint_files(const fs::path& directory) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(directory)) {
    const auto relative = e.path().lexically_relative(directory);
    if (relative == "checkpoint.json") continue;
    if (!e.is_directory()) files.push_back(relative);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// {relative path: {"bytes": N, "hash": H}} of every file beside checkpoint.json.
nlohmann::json checksums_of(const fs::path& directory) {
  auto sums = nlohmann::json::object();
  for (const auto& f : checkpoint_files(directory)) {
    const auto hash = hash_file(directory / f);
    sums[f.generic_string()] = {{"bytes", hash.bytes()}, {"hash", hash.hex()}};
  }
  return sums;
}

// Every file the checkpoint was written with is there, whole and unchanged, and nothing else.
void verify_checksums(const fs::path& directory, const nlohmann::json& about) {
  const auto where = (directory / "checkpoint.json").string();
  if (!about.is_object() || !about.contains("checksums") || !about["checksums"].is_object())
    throw DecodeError(where +
                      " lists no checksums: the checkpoint was written by an older drift or edited; "
                      "run the scenario again");
  const auto& expected = about["checksums"];
  const auto files = checkpoint_files(directory);
  for (const auto& f : files)
    if (!expected.contains(f.generic_string()))
      throw DecodeError((directory / f).string() + " is not part of the checkpoint (" + where + " does not list it)");
  for (const auto& [name, sum] : expected.items()) {
    const auto file = directory / name;
    if (!fs::is_regular_file(file)) throw DecodeError(file.string() + " is missing from the checkpoint");
    const auto actual = hash_file(file);
    if (!sum.is_object() || sum.value("bytes", std::uint64_t{0}) != actual.bytes() ||
        sum.value("hash", "") != actual.hex())
      throw DecodeError(file.string() + " does not match the checksum " + where + " recorded (" +
                        std::to_string(actual.bytes()) + " bytes now): the checkpoint is corrupt or was edited");
  }
}

std::string read_whole(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw DecodeError(p.string() + ": cannot be read");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The complete checkpoint's directory: `checkpoint/`, or `checkpoint.previous/` after a crash
// between the two renames of a swap; empty when there is none.
fs::path complete_checkpoint(const fs::path& run) {
  for (const char* name : {"checkpoint", "checkpoint.previous"})
    if (fs::exists(run / name / "checkpoint.json")) return run / name;
  return {};
}

// Everything but the swap, into `partial`.
std::uint64_t write_parts(const fs::path& partial, Checkpoint& checkpoint, const std::string& scenario_toml,
                          const std::function<void(const fs::path&)>& save_client_states) {
  write_state_file(partial / "state.bin", checkpoint);
  write_file_atomically(partial / "scenario.toml", scenario_toml);
  try {
    save_client_states(partial);
  } catch (const WriteError&) {
    throw;
  } catch (const std::exception& e) {
    throw WriteError(std::string("checkpoint: ") + e.what());
  }
  const auto bytes = bytes_under(partial);
  const nlohmann::json about = {{"aggregation", checkpoint.round},
                                {"virtual_time", checkpoint.virtual_time},
                                {"wall_seconds", checkpoint.wall_seconds},
                                {"bytes", bytes},
                                {"drift", drift_version()},
                                {"scenario_hash", scenario_hash(scenario_toml)},
                                {"checksums", checksums_of(partial)}};
  write_file_atomically(partial / "checkpoint.json", about.dump(2) + "\n");
  sync_files(partial);
  sync_directory(partial);
  return bytes;
}

}  // namespace

std::uint64_t write_checkpoint(const fs::path& run, Checkpoint checkpoint, const std::string& scenario_toml,
                               const std::function<void(const fs::path&)>& save_client_states) {
  const auto partial = run / "checkpoint.partial";
  const auto current = run / "checkpoint";
  const auto previous = run / "checkpoint.previous";
  remove_all_or_throw(partial);
  std::error_code ec;
  fs::create_directories(partial / "client_state", ec);
  if (ec) throw WriteError(partial.string() + ": cannot create: " + ec.message());

  std::uint64_t bytes = 0;
  try {
    bytes = write_parts(partial, checkpoint, scenario_toml, save_client_states);
  } catch (...) {
    remove_tree(partial, ec);  // a full disk: the space goes back, the last checkpoint stays
    throw;
  }

  // Swap: the old checkpoint stays complete under another name until the new one is in place.
  remove_all_or_throw(previous);
  if (fs::exists(current)) {
    fs::rename(current, previous, ec);
    if (ec) throw WriteError(current.string() + ": cannot rename: " + ec.message());
  }
  fs::rename(partial, current, ec);
  if (ec) throw WriteError(partial.string() + ": cannot rename: " + ec.message());
  sync_directory(run);
  remove_all_or_throw(previous);
  return bytes;
}

std::optional<StoredCheckpoint> read_checkpoint(const fs::path& run) {
  const auto directory = complete_checkpoint(run);
  if (directory.empty()) return std::nullopt;
  StoredCheckpoint stored;
  stored.directory = directory;
  if (!fs::is_regular_file(directory / "checkpoint.json"))
    throw DecodeError((directory / "checkpoint.json").string() + " is not a file");
  verify_checksums(directory, nlohmann::json::parse(read_whole(directory / "checkpoint.json"), nullptr, false));
  auto ar = StateArchive::reader(read_whole(directory / "state.bin"), (directory / "state.bin").string());
  read_checkpoint_archive(ar, stored.checkpoint);
  ar.expect_end();
  stored.scenario_toml = read_whole(directory / "scenario.toml");
  return stored;
}

bool has_checkpoint(const fs::path& run) { return !complete_checkpoint(run).empty(); }

}  // namespace drift
