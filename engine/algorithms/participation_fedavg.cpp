// The FedAvg forms the participation papers compare against (docs/algorithms.md#participation):
// every client counts alike, whatever its sample count, and the server steps along the mean
// change with its own learning rate eta.
//   fedavg-participants  x <- x + eta / |S| * sum_{i in S} (w_i - x)   (FedAU's average_participating)
//   fedavg-all           x <- x + eta / N   * sum_{i in S} (w_i - x)   (FedAU's average_all)
//   amplified-fedavg     fedavg-participants with eta = 1, and every P rounds the change since the
//                        last amplification is multiplied by the factor: x <- x_snap + f (x - x_snap)
//                        (Wang and Ji, "A Unified Analysis of Federated Learning with Arbitrary
//                        Client Participation", NeurIPS 2022; its generalized FedAvg).
#include <algorithm>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/model_changes.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {
namespace {

struct UniformOptions {
  double server_lr = 1.0;  // eta
};

// x <- x + scale * sum_i (w_i - x), the updates counted alike.
void step_by_changes(NamedTensors& global, const std::vector<ClientUpdate>& updates, double scale) {
  const std::vector<double> ones(updates.size(), 1.0);
  apply_flat_step(global, scale * weighted_change_sum(global, updates, ones), updates);
}

class UniformFedAvgServer final : public ServerAlgorithm {
 public:
  // `all_clients`: divide by the registered population N, else by the aggregated updates.
  UniformFedAvgServer(double eta, std::uint32_t all_clients) : eta_(eta), all_clients_(all_clients) {}

  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput&) override {
    step_by_changes(global, updates, eta_ / divisor(updates));
  }
  ClientShares shares(const std::vector<ClientUpdate>& updates) const override {
    return equal_shares(updates, 1.0 / divisor(updates));
  }
  // fedavg-all at an edge divides by the edge's clients, whoever they are now.
  void regroup(const ClientRegroup& regroup) override {
    if (all_clients_ > 0) all_clients_ = std::max<std::uint32_t>(regroup.size(), 1);
  }
  void archive(StateArchive&) override {}  // keeps nothing between rounds

 private:
  double divisor(const std::vector<ClientUpdate>& updates) const {
    return static_cast<double>(all_clients_ > 0 ? all_clients_ : updates.size());
  }

  double eta_;
  std::uint32_t all_clients_;
};

struct AmplifiedOptions {
  std::int64_t period = 500;  // P: rounds between amplifications (the reference code's 100 + 400)
  double factor = 1.0;        // eta >= 1; 1 is FedAvg over the participants
};

class AmplifiedFedAvgServer final : public ServerAlgorithm {
 public:
  explicit AmplifiedFedAvgServer(const AmplifiedOptions& o) : o_(o) {}

  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override {
    remember_start(global);
    step_by_changes(global, updates, 1.0 / static_cast<double>(updates.size()));
    amplify_if_due(global, input.round);
  }

  bool aggregate_nothing(NamedTensors& global, const AggregationInput& input) override {
    remember_start(global);
    return amplify_if_due(global, input.round);
  }

  // An amplification repeats the last P rounds' moves, whose shares are already counted.
  ClientShares shares(const std::vector<ClientUpdate>& updates) const override {
    return equal_shares(updates, updates.empty() ? 0.0 : 1.0 / static_cast<double>(updates.size()));
  }

  AlgorithmMetrics metrics() const override {
    AlgorithmMetrics m;
    m.scalars["amplified"] = amplified_ ? 1.0 : 0.0;
    return m;
  }

  void archive(StateArchive& ar) override {
    archive_tensor(ar, snapshot_);
    ar.value(amplified_);
  }

 private:
  // x_snap starts as the initial model.
  void remember_start(const NamedTensors& global) {
    if (!snapshot_.defined()) snapshot_ = flat_model(global);
  }

  // Rounds count from 1, so the P-th, 2P-th, ... round ends with an amplification.
  bool amplify_if_due(NamedTensors& global, std::uint32_t round) {
    amplified_ = round % static_cast<std::uint64_t>(o_.period) == 0;
    if (!amplified_) return false;
    const bool moves = o_.factor != 1.0;
    if (moves) apply_flat_step(global, (o_.factor - 1.0) * (flat_model(global) - snapshot_));
    snapshot_ = flat_model(global);  // after the step: the model as its dtype holds it
    return moves;
  }

  AmplifiedOptions o_;
  torch::Tensor snapshot_;  // float64 x_snap; undefined until the first round
  bool amplified_ = false;
};

}  // namespace

AlgorithmInfo fedavg_participants_info() {
  using O = UniformOptions;
  const ParamTable<O> params{{
      bind_key<O>("server_lr", "server learning rate eta on the participants' mean change", &O::server_lr)
          .range(0.0, std::nullopt, true),
  }};
  auto info = algorithm_info(
      "fedavg-participants", "FedAvg over the participants, each counted alike, with a server learning rate", params,
      [](const O&) { return make_local_sgd_client(); },
      [](const O& o, const FederationShape&) { return std::make_unique<UniformFedAvgServer>(o.server_lr, 0); });
  info.packed = plain_local_sgd;
  info.privatisable = true;
  info.edge_tier = true;
  info.edge_moves = true;
  return info;
}

AlgorithmInfo fedavg_all_info() {
  using O = UniformOptions;
  const ParamTable<O> params{{
      bind_key<O>("server_lr", "server learning rate eta (the step divides by the registered clients N)", &O::server_lr)
          .range(0.0, std::nullopt, true),
  }};
  auto info = algorithm_info(
      "fedavg-all", "FedAvg over all clients: the participants' changes summed and divided by N", params,
      [](const O&) { return make_local_sgd_client(); },
      [](const O& o, const FederationShape& shape) {
        return std::make_unique<UniformFedAvgServer>(o.server_lr, std::max<std::uint32_t>(shape.num_clients, 1));
      });
  info.packed = plain_local_sgd;
  info.privatisable = true;
  info.edge_tier = true;
  info.edge_moves = true;
  info.sync_only =
      "fedavg-all divides a round's changes by every registered client, and an asynchronous "
      "aggregation of one or a few updates is no round";
  return info;
}

AlgorithmInfo amplified_fedavg_info() {
  using O = AmplifiedOptions;
  const ParamTable<O> params{{
      bind_key<O>("period", "P: every P rounds (aggregations, async) the change since the last one is amplified",
                  &O::period)
          .range(1.0, std::nullopt),
      bind_key<O>("factor", "eta: the amplification factor (1: plain FedAvg over the participants)", &O::factor)
          .range(1.0, std::nullopt),
  }};
  auto info = algorithm_info(
      "amplified-fedavg", "Generalized FedAvg: every P rounds the accumulated change is amplified by a factor", params,
      [](const O&) { return make_local_sgd_client(); },
      [](const O& o, const FederationShape&) { return std::make_unique<AmplifiedFedAvgServer>(o); });
  info.packed = plain_local_sgd;
  info.privatisable = true;
  info.edge_tier = true;
  info.edge_moves = true;
  return info;
}

}  // namespace drift
