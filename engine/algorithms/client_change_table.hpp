#pragma once
// The latest change of every client, as MIFA and FedVARP keep it on the server: zero until a
// client's first update, then its last one, with the float64 sum of all entries kept up to
// date so that a round costs O(|S| d), not O(N d) (docs/algorithms.md#participation).
// Entries are stored in the model's own dtype (float32 in a run), which is what bounds the
// table's memory: N entries of one model each, checked against algorithm.memory_budget_mb
// before the run.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/metrics/algorithm_metrics.hpp"
#include "engine/tensors/named_tensors.hpp"

namespace drift {

class ClientChangeTable {
 public:
  explicit ClientChangeTable(std::uint32_t clients) : entries_(clients) {}

  std::uint32_t clients() const { return static_cast<std::uint32_t>(entries_.size()); }
  // Client i's entry in float64, zeros of `values` when it has none yet.
  torch::Tensor entry(std::uint32_t client, std::int64_t values) const;
  // sum_i entry_i in float64, zeros of `values` while the table is empty; read it, do not
  // change it in place (it is the table's own running sum).
  torch::Tensor sum(std::int64_t values) const;
  // Overwrites client i's entry with `change` (float64) stored as `storage`; the sum follows
  // the stored, rounded values, so it always equals the sum of the entries up to float64 rounding.
  void store(std::uint32_t client, const torch::Tensor& change, torch::ScalarType storage);
  std::uint32_t filled() const { return filled_; }
  std::uint64_t bytes() const { return bytes_; }
  // Throws std::logic_error naming `algorithm` for a client beyond the table.
  void require_client(const std::string& algorithm, std::uint32_t client) const;
  // What metrics.jsonl reports of the table: `table_clients` (entries filled) and `table_mb`.
  AlgorithmMetrics metrics() const;
  void archive(StateArchive& ar);

 private:
  std::vector<torch::Tensor> entries_;  // undefined: zero (never stored)
  torch::Tensor sum_;                   // float64; undefined while empty
  std::uint32_t filled_ = 0;
  std::uint64_t bytes_ = 0;
};

// The dtype a table keeps a model's changes in: that of the model's first floating tensor.
torch::ScalarType storage_dtype(const NamedTensors& model);

// The refusal of a table of `clients` entries of `entry_bytes` each above `budget_mb`, naming
// the algorithm and the size it would need; empty when it fits, or when `entry_bytes` is 0
// (the model is not built yet: the check runs again when it is).
// `what` names what is kept per client ("the latest change").
std::string table_budget_refusal(const std::string& algorithm, const std::string& what, std::uint32_t clients,
                                 std::uint64_t entry_bytes, double budget_mb);

}  // namespace drift
