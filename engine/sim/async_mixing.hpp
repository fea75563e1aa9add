#pragma once
// How the asynchronous drivers fold an arriving update into the global model
// (docs/algorithms.md#fedasync, #fedbuff): FedAsync mixes each update in at once with a
// staleness-discounted weight; FedBuff buffers K staleness-weighted deltas and applies their
// mean. Every new global model is one aggregation and one model version.
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/sim/staleness.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

class AsyncMixing {
 public:
  AsyncMixing(const Scenario& scenario, NamedTensors initial);

  const std::shared_ptr<const NamedTensors>& global() const { return global_; }
  std::uint64_t version() const { return version_; }

  // Folds in `update`, trained from `pulled` `staleness` versions ago. True when this made a
  // new global model. Throws DecodeError for weights of another architecture.
  bool add(ClientUpdate update, const NamedTensors& pulled, std::uint64_t staleness);

  struct Applied {
    std::vector<ClientUpdate> updates;  // in arrival order
    std::vector<std::uint64_t> staleness;
  };
  // The updates that made the latest global model.
  Applied take_applied();

 private:
  void mix(ClientUpdate& update, std::uint64_t staleness);
  void buffer(ClientUpdate& update, const NamedTensors& pulled, std::uint64_t staleness);

  const Scenario& scenario_;
  bool buffered_;  // FedBuff
  StalenessFunction staleness_;
  std::shared_ptr<const NamedTensors> global_;
  std::uint64_t version_ = 0;
  std::vector<at::Tensor> delta_sum_;  // FedBuff: float64, per tensor
  Applied pending_;
};

}  // namespace drift
