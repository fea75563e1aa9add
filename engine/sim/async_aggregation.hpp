#pragma once
// When and how the asynchronous schedules aggregate (docs/algorithms.md#aggregation).
//   when: FedAsync after every update, FedBuff after every K (async.buffer_size);
//   how:  FedAsync mixes the update's model in with a = alpha * s(staleness); FedBuff steps by
//         server_lr times the mean of the K staleness-weighted deltas (x_local - x_pulled);
//   what: the scenario's server half, handed that model and the buffered updates sorted by
//         client id, each with its staleness and the version it pulled.
// Every aggregation makes one new global model and one model version.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/config/scenario.hpp"
#include "engine/sim/aggregation_stages.hpp"
#include "engine/sim/staleness.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

class AsyncAggregation {
 public:
  // `initial` is empty for private models: then no weights are combined, only knowledge.
  // `stages`: what FedBuff's buffered updates pass through (DP's clipping and noise), kept in
  // this object's checkpoint; null: nothing.
  AsyncAggregation(const Scenario& scenario, NamedTensors initial, std::unique_ptr<ServerAlgorithm> algorithm,
                   AggregationStages* stages = nullptr);

  const std::shared_ptr<const NamedTensors>& global() const { return global_; }
  std::uint64_t version() const { return version_; }
  // The server half's extras for tasks of the current version.
  Payload broadcast(std::uint32_t round) { return algorithm_->broadcast(round); }

  std::uint32_t buffered() const { return static_cast<std::uint32_t>(pending_.updates.size()); }
  // Updates per aggregation: K for FedBuff, 1 for FedAsync.
  std::uint32_t per_aggregation() const { return aggregated_per_round(scenario_); }

  // Buffers `update`, trained from `pulled` `staleness` versions ago. True when this made a
  // new global model (aggregation number `round`). Throws DecodeError for weights of another
  // architecture.
  bool add(ClientUpdate update, const NamedTensors& pulled, std::uint64_t staleness, std::uint32_t round);

  struct Applied {
    std::vector<ClientUpdate> updates;  // in arrival order
    std::vector<std::uint64_t> staleness;
    AlgorithmMetrics metrics;  // the server half's
    // The schedule's weight of each update, in client-id order: under FedAsync and FedBuff the
    // schedule, not the server half, decides how much each update moves the model.
    ClientShares shares;
    DpMechanism::Stats dp;  // [privacy]: updates clipped, the clip, and the noise on the mean
  };
  // The updates that made the latest global model (taken once).
  Applied take_applied();
  // The global model, its version, the buffer and the server half's state.
  void archive(StateArchive& ar);

 private:
  double schedule_weight(std::size_t k) const;  // of the k-th buffered update
  NamedTensors mix(const ClientUpdate& update, double a) const;
  void accumulate(const ClientUpdate& update, const NamedTensors& pulled, double weight, std::uint32_t round);
  NamedTensors step(std::uint32_t round);
  void aggregate(NamedTensors mean, std::uint32_t round);

  const Scenario& scenario_;
  std::unique_ptr<ServerAlgorithm> algorithm_;
  bool buffered_;  // FedBuff
  StalenessFunction staleness_;
  std::shared_ptr<const NamedTensors> global_;
  std::uint64_t version_ = 0;
  std::vector<at::Tensor> delta_sum_;  // FedBuff: float64, per tensor
  AggregationStages* stages_;          // [privacy]: the buffer's sum is of clipped changes, then noised
  Applied pending_;                    // buffered since the last aggregation
  Applied applied_;                    // the last aggregation's
};

}  // namespace drift
