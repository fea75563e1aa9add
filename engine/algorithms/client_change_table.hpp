#pragma once
// The latest change of every client, as MIFA and FedVARP keep it on the server: zero until a
// client's first update, then its last one, with the float64 sum of all entries kept up to
// date so that a round costs O(|S| d), not O(N d) (docs/algorithms.md#participation).
// Entries are stored in the model's own dtype (float32 in a run), which is what bounds the
// table: N entries of one model each. Below algorithm.memory_budget_mb they are held in memory,
// above it in a file of the run directory (DiskSlots), with only the sum in memory.
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/disk_slots.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/metrics/algorithm_metrics.hpp"
#include "engine/tensors/federated_types.hpp"
#include "engine/tensors/named_tensors.hpp"

namespace drift {

class ClientChangeTable {
 public:
  explicit ClientChangeTable(std::uint32_t clients) : clients_(clients), entries_(clients) {}
  // The entries in `file` instead of memory. `rows` > 0: the table follows clients between
  // edges (regroup) and may come to hold up to `rows` of them.
  ClientChangeTable(std::uint32_t clients, const std::filesystem::path& file, std::uint32_t rows = 0);

  std::uint32_t clients() const { return clients_; }
  // Client i's entry in float64, zeros of `values` when it has none yet.
  torch::Tensor entry(std::uint32_t client, std::int64_t values) const;
  // sum_i entry_i in float64, zeros of `values` while the table is empty; read it, do not
  // change it in place (it is the table's own running sum).
  torch::Tensor sum(std::int64_t values) const;
  // Overwrites client i's entry with `change` (float64) stored as `storage`; the sum follows
  // the stored, rounded values, so it always equals the sum of the entries up to float64 rounding.
  void store(std::uint32_t client, const torch::Tensor& change, torch::ScalarType storage);
  std::uint32_t filled() const { return filled_; }
  bool has_entry(std::uint32_t client) const;
  bool on_disk() const { return disk_ != nullptr; }
  // Every client with an entry, each with `coefficient`: the shares of a step along the table's mean.
  ClientShares filled_shares(double coefficient) const;
  std::uint64_t bytes() const { return bytes_; }
  // Clients moved between edges (ServerAlgorithm::regroup): entry i of the table is now that of
  // `previous[i]`, none for a client who joined; the entries of clients who left are dropped and
  // the sum is taken again over those kept, in order. On disk the entries stay in their rows of
  // the file and the table maps its clients to them (a newcomer takes the lowest free row).
  void regroup(const std::vector<std::optional<std::uint32_t>>& previous);
  // Throws std::logic_error naming `algorithm` for a client beyond the table.
  void require_client(const std::string& algorithm, std::uint32_t client) const;
  // What metrics.jsonl reports of the table: `table_clients` (entries filled), `table_mb` and,
  // for a table on disk, `table_on_disk` = 1.
  AlgorithmMetrics metrics() const;
  void archive(StateArchive& ar);

 private:
  torch::Tensor read(std::uint32_t client) const;  // a stored entry, in its storage dtype
  void regroup_rows(const std::vector<std::optional<std::uint32_t>>& previous);
  void sum_again();
  void count_filled();  // filled_ and bytes_ from the entries held

  std::uint32_t clients_ = 0;
  std::vector<torch::Tensor> entries_;  // in memory; undefined: zero (never stored)
  std::unique_ptr<DiskSlots> disk_;     // or on disk,
  std::vector<std::uint32_t> rows_;     // ... client i's entry in row rows_[i] of the file
  bool follows_moves_ = false;          // on disk: rows_ changes with regroups, so checkpoints keep it
  torch::ScalarType storage_ = torch::kFloat32;
  std::int64_t values_ = 0;  // of each entry, once one is stored
  torch::Tensor sum_;        // float64; undefined while empty
  std::uint32_t filled_ = 0;
  std::uint64_t bytes_ = 0;
};

// The dtype a table keeps a model's changes in: that of the model's first floating tensor.
torch::ScalarType storage_dtype(const NamedTensors& model);

// The table `algorithm` keeps of `what`, one entry of shape.model_bytes per client: in memory
// within `budget_mb`, else in `<shape.state_dir>/<algorithm>_table.bin`. With clients moving
// between edges (shape.most_clients > 0) the budget is checked against the most clients the
// table may come to hold, and a file has that many rows. A UserError saying the size when it is
// above the budget and there is no state directory, or its disk lacks the room.
ClientChangeTable make_change_table(const std::string& algorithm, const std::string& what, const FederationShape& shape,
                                    double budget_mb);

// Where make_change_table would keep the table and how large it may grow: "mifa keeps the
// latest change of each of 40 clients: 12.2 MB, in memory (...)"; empty while the model is not built.
std::string change_table_placement(const std::string& algorithm, const std::string& what, const FederationShape& shape,
                                   double budget_mb);

// The refusal of a table of `clients` entries of `entry_bytes` each above `budget_mb`, naming
// the algorithm and the size it would need; empty when it fits, or when `entry_bytes` is 0
// (the model is not built yet: the check runs again when it is).
// `what` names what is kept per client ("the latest change").
std::string table_budget_refusal(const std::string& algorithm, const std::string& what, std::uint32_t clients,
                                 std::uint64_t entry_bytes, double budget_mb);

}  // namespace drift
