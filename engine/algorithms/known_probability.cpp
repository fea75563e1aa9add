// FedAvg with known participation probabilities: the unbiased oracle of the participation
// papers (FedAU's `known_prob`, FedAWE's `fedknown`; docs/algorithms.md#known-probability).
// Each participant's change is divided by the probability p_i^t with which the simulator made
// it take part in the round, so the expected step is the full-participation mean:
//   x <- x + eta / N * sum_{i in S} (w_i - x) / p_i^t.
// Only the participation processes define p_i^t; elsewhere validation refuses the algorithm.
#include <algorithm>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/model_changes.hpp"
#include "engine/algorithms/param_table.hpp"

namespace drift {
namespace {

struct KnownProbabilityOptions {
  double server_lr = 1.0;  // eta
};

class KnownProbabilityServer final : public ServerAlgorithm {
 public:
  KnownProbabilityServer(double eta, const FederationShape& shape)
      : eta_(eta),
        clients_(std::max<std::uint32_t>(shape.num_clients, 1)),
        ids_(shape.client_ids),
        probability_(shape.participation_probability) {}

  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override {
    probabilities_.clear();
    std::vector<double> weights;
    for (const auto& u : updates) {
      const auto id = ids_.empty() ? u.client_id : ids_.at(u.client_id);
      const auto p = probability_ ? probability_(id, input.round) : std::nullopt;
      // A client that took part had a positive probability; anything else is a wiring error.
      if (!p || *p <= 0.0)
        throw std::logic_error("known-probability: client " + std::to_string(id) +
                               " took part without a positive participation probability");
      probabilities_.push_back(*p);
      weights.push_back(1.0 / *p);
    }
    const auto sum = weighted_change_sum(global, updates, weights);
    apply_flat_step(global, (eta_ / static_cast<double>(clients_)) * sum, updates);
  }

  // 1 / (N p_i): the unbiased weights.
  ClientShares shares(const std::vector<ClientUpdate>& updates) const override {
    std::vector<double> coefficients;
    for (double p : probabilities_) coefficients.push_back(1.0 / (static_cast<double>(clients_) * p));
    return shares_of(updates, coefficients);
  }

  AlgorithmMetrics metrics() const override {
    AlgorithmMetrics m;
    m.per_client["participation_probability"] = probabilities_;
    return m;
  }

  // An edge's N and its clients' ids follow the moves; p_i is the client's wherever it is.
  void regroup(const ClientRegroup& regroup) override {
    ids_ = regroup.clients;
    clients_ = std::max<std::uint32_t>(regroup.size(), 1);
  }

  void archive(StateArchive& ar) override { ar.values(probabilities_); }

 private:
  double eta_;
  std::uint32_t clients_;
  // At an edge, its clients' population ids; empty: the population (an edge left empty by moves
  // aggregates nobody, so it never looks one up).
  std::vector<std::uint32_t> ids_;
  std::function<std::optional<double>(std::uint32_t, std::uint32_t)> probability_;
  std::vector<double> probabilities_;  // p_i^t of the last aggregation's clients
};

// Refused unless every client's availability defines p_i (checked once the population is built).
std::string needs_probabilities(const FederationShape& shape) {
  if (!shape.participation_probability) return {};
  for (std::uint32_t i = 0; i < shape.num_clients; ++i)
    if (!shape.participation_probability(i, 1))
      return "known-probability divides each change by the client's participation probability, and client " +
             std::to_string(i) +
             "'s availability model defines none: only the participation processes bernoulli, round_markov and "
             "cyclic do (docs/scenarios.md#participation-processes)";
  return {};
}

}  // namespace

AlgorithmInfo known_probability_info() {
  using O = KnownProbabilityOptions;
  const ParamTable<O> params{{
      bind_key<O>("server_lr", "server learning rate eta (the step divides by the registered clients N)", &O::server_lr)
          .range(0.0, std::nullopt, true),
  }};
  auto info = algorithm_info(
      "known-probability", "FedAvg with each change divided by the client's known participation probability (oracle)",
      params, [](const O&) { return make_local_sgd_client(); },
      [](const O& o, const FederationShape& shape) {
        return std::make_unique<KnownProbabilityServer>(o.server_lr, shape);
      });
  info.check = params.reading([](const O&, const FederationShape& shape) { return needs_probabilities(shape); });
  info.packed = plain_local_sgd;
  info.privatisable = true;
  info.edge_tier = true;
  info.edge_moves = true;
  info.sync_only = "the participation probabilities are those of a round, and asynchronous aggregations have none";
  return info;
}

}  // namespace drift
