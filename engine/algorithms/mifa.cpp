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
namespace mifa {
// What the table holds: raw changes stepped by eta (FedAU's and FedAWE's code, the default), or
// changes divided by the round's local learning rate and stepped by the current one (the
// official MIFA code, "no wait"; the paper's recollection). official-wait also holds the model
// where it started until every client has taken part once (the official code's `fdu`).
enum class Variant { fedau, official, official_wait };
}  // namespace mifa
template <>
struct ChoiceNames<mifa::Variant> {
  static constexpr std::array<std::string_view, 3> names{"fedau", "official", "official-wait"};
};

namespace {

struct MifaOptions {
  double server_lr = 1.0;  // eta (fedau variant)
  mifa::Variant variant = mifa::Variant::fedau;
  double memory_budget_mb = 4096.0;  // the table's ceiling, checked before the run
};

class MifaServer final : public ServerAlgorithm {
 public:
  MifaServer(const MifaOptions& o, const FederationShape& shape)
      : o_(o),
        local_lr_(shape.local_lr),
        table_(make_change_table("mifa", "the latest change", shape, o.memory_budget_mb)) {}

  // Official variant: G_i = Delta_i / gamma_r, and x <- x + gamma_r / N sum_i G_i.
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override {
    const double scale = official() ? 1.0 / learning_rate(input.round) : 1.0;
    const auto changes = flat_changes(updates, global);
    for (std::size_t k = 0; k < updates.size(); ++k) {
      table_.require_client("mifa", updates[k].client_id);
      table_.store(updates[k].client_id, scale * changes[k], storage_dtype(global));
    }
    if (waiting()) return;  // every change so far was computed from the initial model
    apply_flat_step(global, mean_step(global, input.round), updates);
  }

  // The remembered changes keep moving the model when nobody took part.
  bool aggregate_nothing(NamedTensors& global, const AggregationInput& input) override {
    if (table_.filled() == 0 || waiting()) return false;
    apply_flat_step(global, mean_step(global, input.round));
    return true;
  }

  // Every remembered change counts 1/N, fresh or not.
  ClientShares shares(const std::vector<ClientUpdate>&) const override {
    if (waiting()) return {};
    return table_.filled_shares(1.0 / static_cast<double>(table_.clients()));
  }

  // official-wait adds `waiting`: 1 while the model is held for clients not yet seen.
  AlgorithmMetrics metrics() const override {
    auto m = table_.metrics();
    if (o_.variant == mifa::Variant::official_wait) m.scalars["waiting"] = waiting() ? 1.0 : 0.0;
    return m;
  }

  // At an edge: the changes of the clients who stayed, none yet for those who joined, N the
  // edge's clients now.
  void regroup(const ClientRegroup& regroup) override { table_.regroup(regroup.previous); }

  void archive(StateArchive& ar) override { table_.archive(ar); }

 private:
  bool official() const { return o_.variant != mifa::Variant::fedau; }
  bool waiting() const { return o_.variant == mifa::Variant::official_wait && table_.filled() < table_.clients(); }

  double learning_rate(std::uint32_t round) const {
    if (!local_lr_) throw std::logic_error("mifa: the official variant needs the local learning rate of each round");
    return local_lr_(round);
  }

  torch::Tensor mean_step(const NamedTensors& global, std::uint32_t round) const {
    const double step = official() ? learning_rate(round) : o_.server_lr;
    return (step / static_cast<double>(table_.clients())) * table_.sum(floating_values(global));
  }

  MifaOptions o_;
  std::function<double(std::uint32_t)> local_lr_;
  ClientChangeTable table_;
};

}  // namespace

AlgorithmInfo mifa_info() {
  using O = MifaOptions;
  const ParamTable<O> params{{
      bind_key<O>("server_lr", "server learning rate eta (the step averages all N remembered changes)", &O::server_lr)
          .range(0.0, std::nullopt, true),
      bind_key<O>("variant",
                  "fedau: raw changes stepped by server_lr (FedAU's code); official: changes over the local lr, "
                  "stepped by the current one (MIFA's code); official-wait: the same, the model held until every "
                  "client has taken part once (MIFA's fdu)",
                  &O::variant),
      bind_key<O>("memory_budget_mb",
                  "the most memory the table of N changes may take (MB); above it the table is kept on disk in "
                  "the run directory",
                  &O::memory_budget_mb)
          .range(0.0, std::nullopt, true),
  }};
  auto info = algorithm_info(
      "mifa", "MIFA: the server steps along the mean of every client's latest change, also in empty rounds", params,
      [](const O&) { return make_local_sgd_client(); },
      [](const O& o, const FederationShape& shape) { return std::make_unique<MifaServer>(o, shape); });
  info.check = params.reading([](const O& o, const FederationShape&) -> std::string {
    if (o.variant != mifa::Variant::fedau && o.server_lr != 1.0)
      return "mifa's official variant steps by the local learning rate and has no server learning rate: leave "
             "algorithm.server_lr at 1 (or use variant = \"fedau\")";
    return std::string();
  });
  info.memory = params.reading([](const O& o, const FederationShape& shape) {
    return change_table_placement("mifa", "the latest change", shape, o.memory_budget_mb);
  });
  info.packed = plain_local_sgd;
  info.privatisable = true;
  info.edge_tier = true;
  info.edge_moves = true;
  info.sync_only =
      "mifa steps along its table once per round, including rounds nobody took part in, and "
      "asynchronous aggregations have no rounds";
  return info;
}

}  // namespace drift
