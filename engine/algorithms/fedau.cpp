// FedAU (Wang and Ji, "A Lightweight Method for Tackling Unknown Participation Statistics in
// Federated Averaging", ICLR 2024; reference code IBM/fedau): FedAvg in which client i's change
// is weighted by an online estimate of its mean interval between participations, so clients
// that take part rarely count as much as frequent ones (docs/algorithms.md#fedau):
//   x <- x + eta / N * sum_{i aggregated} omega_i (w_i - x),   N = registered clients,
//   omega_i = mean of i's recorded intervals (1 while none is recorded), read before the round
//   is booked. Every round books every client: one that took part records c_i + 1 and restarts
//   its count; one that did not counts on, and records K when its count reaches the cut-off K.
// Rounds in which nothing was aggregated (nobody, or fewer than simulation.min_cohort) are
// booked as rounds without participants.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/model_changes.hpp"
#include "engine/algorithms/param_helpers.hpp"
#include "engine/algorithms/param_table.hpp"

namespace drift {
namespace {

struct FedAuOptions {
  double server_lr = 1.0;        // eta
  std::int64_t cutoff = 100000;  // K, the reference code's default (in effect no cut-off)
};

// Each client's participation intervals, as the reference code books them.
class ParticipationIntervals {
 public:
  ParticipationIntervals(std::size_t clients, std::uint64_t cutoff)
      : cutoff_(cutoff), count_(clients, 0), recorded_(clients, 0), total_(clients, 0) {}

  double weight(std::uint32_t client) const {
    return recorded_.at(client) == 0 ? 1.0
                                     : static_cast<double>(total_[client]) / static_cast<double>(recorded_[client]);
  }

  // One round: `participants` sorted ascending.
  void book(const std::vector<std::uint32_t>& participants) {
    auto next = participants.begin();
    for (std::uint32_t i = 0; i < count_.size(); ++i) {
      if (next != participants.end() && *next == i) {
        record(i, count_[i] + 1);
        ++next;
      } else if (++count_[i] >= cutoff_) {
        record(i, count_[i]);
      }
    }
  }

  // Clients moved between edges: those who stayed keep their counts at their new places; one
  // who joined starts with none recorded, as at the run's start.
  void regroup(const std::vector<std::optional<std::uint32_t>>& previous) {
    std::vector<std::uint64_t> count(previous.size(), 0), recorded(previous.size(), 0), total(previous.size(), 0);
    for (std::size_t i = 0; i < previous.size(); ++i) {
      if (!previous[i]) continue;
      count[i] = count_.at(*previous[i]);
      recorded[i] = recorded_.at(*previous[i]);
      total[i] = total_.at(*previous[i]);
    }
    count_ = std::move(count);
    recorded_ = std::move(recorded);
    total_ = std::move(total);
  }

  void archive(StateArchive& ar) {
    ar.values(count_);
    ar.values(recorded_);
    ar.values(total_);
  }

 private:
  void record(std::uint32_t i, std::uint64_t interval) {
    total_[i] += interval;
    ++recorded_[i];
    count_[i] = 0;
  }

  std::uint64_t cutoff_;
  std::vector<std::uint64_t> count_, recorded_, total_;
};

class FedAuServer final : public ServerAlgorithm {
 public:
  FedAuServer(const FedAuOptions& o, const FederationShape& shape)
      : eta_(o.server_lr),
        clients_(std::max<std::uint32_t>(shape.num_clients, 1)),
        intervals_(clients_, static_cast<std::uint64_t>(o.cutoff)) {}

  // x += eta / N * sum_i omega_i (w_i - x), summed in float64 in client-id order.
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput&) override {
    std::vector<std::uint32_t> participants;
    weights_.clear();
    for (const auto& u : updates) {
      if (u.client_id >= clients_)
        throw std::logic_error("fedau: client " + std::to_string(u.client_id) + " beyond the registered " +
                               std::to_string(clients_));
      participants.push_back(u.client_id);
      weights_.push_back(intervals_.weight(u.client_id));
    }
    const auto sum = weighted_change_sum(global, updates, weights_);
    apply_flat_step(global, (eta_ / static_cast<double>(clients_)) * sum, updates);
    intervals_.book(participants);
  }

  // A round nobody took part in still counts for every client.
  bool aggregate_nothing(NamedTensors&, const AggregationInput&) override {
    weights_.clear();
    intervals_.book({});
    return false;
  }

  // At an edge, N is its clients now; what was booked of a client that left goes with it.
  void regroup(const ClientRegroup& regroup) override {
    clients_ = std::max<std::uint32_t>(regroup.size(), 1);
    intervals_.regroup(regroup.previous);
  }

  ClientShares shares(const std::vector<ClientUpdate>& updates) const override {
    auto shares = shares_of(updates, weights_);
    for (auto& s : shares) s.second /= static_cast<double>(clients_);
    return shares;
  }

  AlgorithmMetrics metrics() const override {
    AlgorithmMetrics m;
    m.per_client["fedau_weight"] = weights_;
    return m;
  }

  void archive(StateArchive& ar) override {
    ar.values(weights_);
    intervals_.archive(ar);
  }

 private:
  double eta_;
  std::uint32_t clients_;
  ParticipationIntervals intervals_;
  std::vector<double> weights_;  // omega of the last aggregation's clients, in their order
};

}  // namespace

AlgorithmInfo fedau_info() {
  using O = FedAuOptions;
  const ParamTable<O> params{{
      bind_key<O>("server_lr", "server learning rate eta (the step divides by the registered clients N)", &O::server_lr)
          .range(0.0, std::nullopt, true),
      bind_key<O>("cutoff", "K: an absence of K rounds is recorded as an interval of K (FedAU's paper runs 50)",
                  &O::cutoff)
          .range(1.0, std::nullopt),
  }};
  auto info = algorithm_info(
      "fedau", "FedAU: FedAvg weighted by each client's estimated participation interval", params,
      [](const O&) { return make_local_sgd_client(); },
      [](const O& o, const FederationShape& shape) { return std::make_unique<FedAuServer>(o, shape); });
  info.packed = plain_local_sgd;
  info.privatisable = true;
  info.edge_tier = true;
  info.edge_moves = true;
  info.sync_only = "FedAU books every client every round, and asynchronous aggregations have no rounds";
  return info;
}

}  // namespace drift
