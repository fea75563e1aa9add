#pragma once
// Where a client's encoded private state waits between its rounds. In memory it costs host
// memory for every client that has trained; on disk (simulation.client_state = "disk"), one
// file per client, so a population of private models costs disk, and memory holds only the
// states of the clients being trained.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "engine/config/choices.hpp"
#include "messages/buffer.hpp"

namespace drift::msg {

class StateStore {
 public:
  virtual ~StateStore() = default;
  // The state kept for `client`, or nothing before its first round.
  virtual std::optional<Buffer> load(std::uint32_t client) = 0;
  virtual void save(std::uint32_t client, const Buffer& state) = 0;
  // Checkpoints (docs/checkpoints.md): copies every state into `directory`, which exists and
  // is empty; restore replaces every state with the copies found there. Throw
  // std::runtime_error naming the file on an I/O failure.
  virtual void save_to(const std::filesystem::path& directory) = 0;
  virtual void restore_from(const std::filesystem::path& directory) = 0;
};

// Thread-safe: client actors run on several scheduler threads.
class MemoryStateStore final : public StateStore {
 public:
  std::optional<Buffer> load(std::uint32_t client) override;
  void save(std::uint32_t client, const Buffer& state) override;
  // One file, clients.bin.
  void save_to(const std::filesystem::path& directory) override;
  void restore_from(const std::filesystem::path& directory) override;

 private:
  std::mutex mutex_;
  std::map<std::uint32_t, Buffer> states_;
};

// `directory`/<client>.state, written to a temporary name and renamed, so a crash never
// leaves half a state behind. Throws std::runtime_error naming the file on an I/O failure.
class DiskStateStore final : public StateStore {
 public:
  explicit DiskStateStore(std::filesystem::path directory);
  std::optional<Buffer> load(std::uint32_t client) override;
  void save(std::uint32_t client, const Buffer& state) override;
  // Hard links (copies where links cannot be made): a state saved later is written to a new
  // file and renamed over the old name, so the checkpoint's link keeps the old bytes.
  void save_to(const std::filesystem::path& directory) override;
  void restore_from(const std::filesystem::path& directory) override;

 private:
  std::filesystem::path file_of(std::uint32_t client) const;
  std::filesystem::path directory_;
};

// "memory" or "disk" (under `directory`).
std::shared_ptr<StateStore> make_state_store(ClientStateStore kind, const std::filesystem::path& directory);

}  // namespace drift::msg
