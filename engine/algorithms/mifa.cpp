// MIFA (Gu et al., "Fast Federated Learning in the Presence of Arbitrary Device
// Unavailability", NeurIPS 2021) as FedAU's and FedAWE's reference code run it: the server
// remembers every client's latest change (zero before its first) and steps along their mean
// over all N clients, every round, also when nobody took part (docs/algorithms.md#mifa):
//   G_i <- w_i - x for i in S;   x <- x + eta / N * sum_{i=1..N} G_i.
#include <algorithm>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/client_change_table.hpp"
#include "engine/algorithms/model_changes.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/core/error.hpp"

namespace drift {
namespace {

class LocalSgd final : public ClientAlgorithm {};

struct MifaOptions {
  double server_lr = 1.0;            // eta
  double memory_budget_mb = 4096.0;  // the table's ceiling, checked before the run
};

class MifaServer final : public ServerAlgorithm {
 public:
  MifaServer(const MifaOptions& o, std::uint32_t clients) : eta_(o.server_lr), table_(clients) {}

  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput&) override {
    for (const auto& u : updates) {
      table_.require_client("mifa", u.client_id);
      table_.store(u.client_id, flat_change(u.weights, global), storage_dtype(global));
    }
    apply_flat_step(global, mean_step(global), updates);
  }

  // The remembered changes keep moving the model when nobody took part.
  bool aggregate_nothing(NamedTensors& global, const AggregationInput&) override {
    if (table_.filled() == 0) return false;
    apply_flat_step(global, mean_step(global));
    return true;
  }

  AlgorithmMetrics metrics() const override { return table_.metrics(); }

  void archive(StateArchive& ar) override { table_.archive(ar); }

 private:
  torch::Tensor mean_step(const NamedTensors& global) const {
    return (eta_ / static_cast<double>(table_.clients())) * table_.sum(floating_values(global));
  }

  double eta_;
  ClientChangeTable table_;
};

}  // namespace

AlgorithmInfo mifa_info() {
  using O = MifaOptions;
  const ParamTable<O> params{{
      bind_key<O>("server_lr", "server learning rate eta (the step averages all N remembered changes)", &O::server_lr)
          .range(0.0, std::nullopt, true),
      bind_key<O>("memory_budget_mb", "the most memory the table of N changes may take (MB)", &O::memory_budget_mb)
          .range(0.0, std::nullopt, true),
  }};
  auto info = algorithm_info(
      "mifa", "MIFA: the server steps along the mean of every client's latest change, also in empty rounds", params,
      [](const O&) { return std::make_unique<LocalSgd>(); },
      [](const O& o, const FederationShape& shape) {
        if (const auto refusal = table_budget_refusal("mifa", "the latest change", shape.num_clients, shape.model_bytes,
                                                      o.memory_budget_mb);
            !refusal.empty())
          throw UserError(refusal);
        return std::make_unique<MifaServer>(o, std::max<std::uint32_t>(shape.num_clients, 1));
      });
  info.check = params.reading([](const O& o, const FederationShape& shape) {
    return table_budget_refusal("mifa", "the latest change", shape.num_clients, shape.model_bytes, o.memory_budget_mb);
  });
  info.packed = plain_local_sgd;
  info.sync_only =
      "mifa steps along its table once per round, including rounds nobody took part in, and "
      "asynchronous aggregations have no rounds";
  return info;
}

}  // namespace drift
