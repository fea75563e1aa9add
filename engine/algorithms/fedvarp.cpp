// FedVARP (Jhunjhunwala et al., "FedVARP: Tackling the Variance Due to Partial Client
// Participation in Federated Learning", UAI 2022): a SAGA-type server that corrects the
// participants' mean change with every client's latest one (zero before its first), as
// FedAU's reference code runs it (docs/algorithms.md#fedvarp):
//   v = ybar + 1/|S| sum_{i in S} (Delta_i - y_i);  x <- x + eta v;  then y_i <- Delta_i for i in S,
// with ybar = 1/N sum_j y_j and y_i read before the round's overwrite.
#include <algorithm>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/client_change_table.hpp"
#include "engine/algorithms/model_changes.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/core/error.hpp"

namespace drift {
namespace fedvarp {
// A round nobody took part in: the code leaves x (`skip`); SAGA would step along ybar.
enum class EmptyRound { skip, apply_ybar };
}  // namespace fedvarp
template <>
struct ChoiceNames<fedvarp::EmptyRound> {
  static constexpr std::array<std::string_view, 2> names{"skip", "apply_ybar"};
};

namespace {

struct FedVarpOptions {
  double server_lr = 1.0;  // eta
  fedvarp::EmptyRound empty_round = fedvarp::EmptyRound::skip;
  double memory_budget_mb = 4096.0;
};

class FedVarpServer final : public ServerAlgorithm {
 public:
  FedVarpServer(const FedVarpOptions& o, ClientChangeTable table) : o_(o), table_(std::move(table)) {}

  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput&) override {
    const auto d = floating_values(global);
    auto correction = torch::zeros({d}, torch::kFloat64);
    const auto changes = flat_changes(updates, global);
    first_changes_.clear();
    for (std::size_t k = 0; k < updates.size(); ++k) {
      table_.require_client("fedvarp", updates[k].client_id);
      if (!table_.has_entry(updates[k].client_id)) first_changes_.push_back(updates[k].client_id);
      correction += changes[k] - table_.entry(updates[k].client_id, d);
    }
    const auto v = ybar(d) + correction / static_cast<double>(updates.size());
    apply_flat_step(global, o_.server_lr * v, updates);
    for (std::size_t k = 0; k < updates.size(); ++k)
      table_.store(updates[k].client_id, changes[k], storage_dtype(global));
  }

  bool aggregate_nothing(NamedTensors& global, const AggregationInput&) override {
    first_changes_.clear();
    if (o_.empty_round != fedvarp::EmptyRound::apply_ybar || table_.filled() == 0) return false;
    apply_flat_step(global, o_.server_lr * ybar(floating_values(global)));
    return true;
  }

  // A remembered change counts 1/N (in ybar; a participant's own correction cancels its old
  // entry); a participant without one before the round counts 1/|S|, through the correction.
  ClientShares shares(const std::vector<ClientUpdate>& updates) const override {
    auto shares = table_.filled_shares(1.0 / static_cast<double>(table_.clients()));
    for (auto& [client, share] : shares)
      if (std::binary_search(first_changes_.begin(), first_changes_.end(), client))
        share = 1.0 / static_cast<double>(updates.size());
    return shares;
  }

  AlgorithmMetrics metrics() const override { return table_.metrics(); }

  // At an edge: the changes of the clients who stayed, none yet for those who joined, N the
  // edge's clients now.
  void regroup(const ClientRegroup& regroup) override { table_.regroup(regroup.previous); }

  void archive(StateArchive& ar) override { table_.archive(ar); }

 private:
  torch::Tensor ybar(std::int64_t d) const { return table_.sum(d) / static_cast<double>(table_.clients()); }

  FedVarpOptions o_;
  ClientChangeTable table_;
  // The last aggregation's participants who had no entry before it, ascending; read by shares()
  // right after that aggregation only, so no checkpoint needs it.
  std::vector<std::uint32_t> first_changes_;
};

}  // namespace

AlgorithmInfo fedvarp_info() {
  using O = FedVarpOptions;
  const ParamTable<O> params{{
      bind_key<O>("server_lr", "server learning rate eta", &O::server_lr).range(0.0, std::nullopt, true),
      bind_key<O>("empty_round", "a round nobody took part in: skip (the reference code) or step along ybar (SAGA)",
                  &O::empty_round),
      bind_key<O>("memory_budget_mb",
                  "the most memory the table of N changes may take (MB); above it the table is kept on disk in "
                  "the run directory",
                  &O::memory_budget_mb)
          .range(0.0, std::nullopt, true),
  }};
  auto info = algorithm_info(
      "fedvarp", "FedVARP: the participants' mean change corrected by every client's latest change (SAGA)", params,
      [](const O&) { return make_local_sgd_client(); },
      [](const O& o, const FederationShape& shape) {
        return std::make_unique<FedVarpServer>(
            o, make_change_table("fedvarp", "the latest change", shape, o.memory_budget_mb));
      });
  info.memory = params.reading([](const O& o, const FederationShape& shape) {
    return change_table_placement("fedvarp", "the latest change", shape, o.memory_budget_mb);
  });
  info.packed = plain_local_sgd;
  info.privatisable = true;
  info.edge_tier = true;
  info.edge_moves = true;
  info.sync_only =
      "fedvarp's correction compares a round's participants with the table the round started "
      "from, and asynchronous aggregations have no rounds";
  return info;
}

}  // namespace drift
