#pragma once
// A run's checkpoint on disk (docs/checkpoints.md). RUN/checkpoint/ holds:
//   state.bin        the driver (world, global model, server half, jobs in flight), the
//                    sampler, and the run directory's marks (file lengths, counts)
//   scenario.toml    the scenario it was taken under, which `drift resume` runs
//   clients.bin or client_state/   every client's private state
//   checkpoint.json  what a person reads: aggregation, virtual time, size
// A new checkpoint is written to checkpoint.partial/ and swapped in only when complete; the
// previous one is kept (as checkpoint.previous/) until then, so a crash at any moment leaves one
// complete checkpoint.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace drift {

struct Checkpoint {
  std::uint32_t round = 0;  // the aggregation it was taken after
  double virtual_time = 0.0;
  double wall_seconds = 0.0;           // the run's wall time so far, over every process that ran it
  std::string driver, sampler, files;  // StateArchive bytes
};

// Writes `checkpoint` into `run`; `save_client_states` copies the client states into the
// directory it is given. Returns the bytes written. Throws WriteError naming the file.
std::uint64_t write_checkpoint(const std::filesystem::path& run, Checkpoint checkpoint,
                               const std::string& scenario_toml,
                               const std::function<void(const std::filesystem::path&)>& save_client_states);

struct StoredCheckpoint {
  Checkpoint checkpoint;
  std::string scenario_toml;
  std::filesystem::path directory;  // where the client states are
};

// The run's last complete checkpoint, or nothing if it has none. Throws DecodeError for one
// that cannot be read.
std::optional<StoredCheckpoint> read_checkpoint(const std::filesystem::path& run);
// Whether the run has a complete checkpoint, without reading it.
bool has_checkpoint(const std::filesystem::path& run);

}  // namespace drift
