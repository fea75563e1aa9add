#pragma once
// Per-client entries of one fixed size in one file on disk, for a server-half table too large
// for algorithm.memory_budget_mb (docs/algorithms.md#tables-on-disk). Each client has two
// slots, so a checkpoint stays valid while the run goes on: archive() records which slot holds
// each client's entry (and its hash), and from then on a client's next entry goes to its other
// slot. A resume from that checkpoint finds every recorded entry as it was, whatever the run
// wrote after it; a later checkpoint records the newer slots. Reads check the hash.
#include <cstdint>
#include <filesystem>
#include <vector>

#include "engine/core/state_archive.hpp"

namespace drift {

class DiskSlots {
 public:
  // Opens (creating if need be) `file` for `clients` entries. Throws WriteError naming it.
  DiskSlots(std::filesystem::path file, std::uint32_t clients);
  ~DiskSlots();
  DiskSlots(const DiskSlots&) = delete;
  DiskSlots& operator=(const DiskSlots&) = delete;

  const std::filesystem::path& file() const { return file_; }
  std::uint32_t rows() const { return static_cast<std::uint32_t>(current_.size()); }
  bool has(std::uint32_t client) const { return current_.at(client) >= 0; }
  // Entry `client` is gone (its client left the table's edge); the slot a checkpoint recorded
  // stays untouched, so a resume from it finds it, and a next write goes beside it.
  void forget(std::uint32_t client) { current_.at(client) = -1; }
  // Client i's entry into `out` (entry_bytes()); a DecodeError naming the file when its hash
  // is not the one written.
  void read(std::uint32_t client, void* out) const;
  // Every entry has the size of the first one written; another size is a logic error.
  void write(std::uint32_t client, const void* data, std::uint64_t bytes);
  std::uint64_t entry_bytes() const { return entry_bytes_; }
  // Saving commits the current slots (see above); loading checks the file holds them.
  void archive(StateArchive& ar);

 private:
  std::uint64_t offset(std::uint32_t client, int slot) const;

  std::filesystem::path file_;
  int fd_ = -1;
  std::uint64_t entry_bytes_ = 0;
  std::vector<std::int8_t> current_;    // the slot holding each client's entry; -1: none yet
  std::vector<std::int8_t> committed_;  // the slot the last checkpoint recorded; -1: none
  std::vector<std::uint64_t> hash_;     // of each current entry
};

}  // namespace drift
