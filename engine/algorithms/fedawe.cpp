// FedAWE (Xiang et al., "Efficient Federated Learning against Heterogeneous and Non-stationary
// Client Unavailability", NeurIPS 2024; code mingxiang12/FedAWE): every client trains from the
// model it last received, not from the latest one, and its change is echoed by the rounds it
// was away (docs/algorithms.md#fedawe):
//   x_i† = x_i + eta (r - r_i) Delta_i,   x <- mean_{i in S} x_i†,   x_i <- x for i in S,
// with r_i the round of client i's last participation (0 before the first). The code clips
// the echoed mean to clip_norm before adding it: x <- mean_S x_i + eta clip(mean_S (r - r_i) Delta_i).
// Clients that took part in the same round hold the same model, so the server keeps one model
// per round some client still holds, at most min(N, rounds) + 1.
#include <algorithm>
#include <map>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/client_change_table.hpp"
#include "engine/algorithms/model_changes.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/core/error.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {
namespace fedawe {
// What the run evaluates and reports as the global model: the server's latest aggregate (the
// paper's x), or the mean of every client's model (what the code evaluates).
enum class Evaluate { server, client_mean };
}  // namespace fedawe
template <>
struct ChoiceNames<fedawe::Evaluate> {
  static constexpr std::array<std::string_view, 2> names{"server", "client_mean"};
};

namespace {

struct FedAweOptions {
  double server_lr = 1.0;  // eta on the echoed change
  double clip_norm = 0.5;  // the code's clip of the echoed mean; 0: none (the paper)
  fedawe::Evaluate evaluate = fedawe::Evaluate::client_mean;
  double memory_budget_mb = 4096.0;
};

class FedAweServer final : public ServerAlgorithm {
 public:
  FedAweServer(const FedAweOptions& o, std::uint32_t clients) : o_(o), last_(clients, 0) {}

  // Round 1 launches before any aggregation: every client then holds the initial model.
  const NamedTensors* start_model(std::uint32_t client) const override {
    if (models_.empty()) return nullptr;
    return &models_.at(last_.at(client)).model;
  }

  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override {
    remember_initial(global);
    const auto d = floating_values(global);
    auto base = torch::zeros({d}, torch::kFloat64), echo = torch::zeros({d}, torch::kFloat64);
    echo_factors_.clear();
    for (const auto& u : updates) {
      if (u.client_id >= last_.size())
        throw std::logic_error("fedawe: client " + std::to_string(u.client_id) + " beyond the registered " +
                               std::to_string(last_.size()));
      const auto& start = models_.at(last_[u.client_id]).model;
      const double factor = static_cast<double>(input.round - last_[u.client_id]);
      echo_factors_.push_back(factor);
      base += flat_model(start);
      echo += factor * flat_change(u.weights, start);
    }
    const double k = static_cast<double>(updates.size());
    echo /= k;
    if (o_.clip_norm > 0.0) {
      const double norm = echo.norm().item<double>();
      if (norm > o_.clip_norm) echo *= o_.clip_norm / norm;
    }
    const auto next = base / k + o_.server_lr * echo;
    // Every participant now holds the new model; the client mean moves by k x_new - sum of their old ones.
    client_sum_ += k * next - base;
    for (const auto& u : updates) move_client(u.client_id, input.round);
    auto& held = models_[input.round];
    held.model = model_from_flat(global, next, updates);
    global = o_.evaluate == fedawe::Evaluate::server ? clone(held.model)
                                                     : model_from_flat(held.model, client_sum_ / clients());
  }

  // The echo weighs each participant's change by the rounds since its last one.
  ClientShares shares(const std::vector<ClientUpdate>& updates) const override {
    auto shares = shares_of(updates, echo_factors_);
    for (auto& s : shares) s.second /= static_cast<double>(updates.size());
    return shares;
  }

  AlgorithmMetrics metrics() const override {
    AlgorithmMetrics m;
    m.per_client["echo_factor"] = echo_factors_;
    m.scalars["models_held"] = static_cast<double>(models_.size());
    return m;
  }

  // How many clients hold each model follows from last_, so it is counted again on loading.
  void archive(StateArchive& ar) override {
    ar.values(last_);
    ar.map(models_, [&](Held& h) { archive_named(ar, h.model); });
    if (ar.loading() && !models_.empty())  // before the first aggregation, no model is held yet
      for (auto r : last_) {
        auto it = models_.find(r);
        if (it == models_.end()) throw DecodeError("fedawe: a client holds the model of a round the checkpoint lacks");
        ++it->second.clients;
      }
    archive_tensor(ar, client_sum_);
    ar.values(echo_factors_);
  }

 private:
  struct Held {
    NamedTensors model;
    std::uint64_t clients = 0;  // how many clients hold it
  };

  double clients() const { return static_cast<double>(last_.size()); }

  void remember_initial(const NamedTensors& global) {
    if (!models_.empty()) return;
    auto& initial = models_[0];
    initial.model = clone(global);
    initial.clients = last_.size();
    client_sum_ = clients() * flat_model(global);
  }

  void move_client(std::uint32_t client, std::uint32_t round) {
    auto it = models_.find(last_[client]);
    if (--it->second.clients == 0 && it->first != round) models_.erase(it);
    last_[client] = round;
    ++models_[round].clients;
  }

  FedAweOptions o_;
  std::vector<std::uint32_t> last_;       // r_i: the round of each client's last participation, 0 before
  std::map<std::uint32_t, Held> models_;  // by round: the models some client holds
  torch::Tensor client_sum_;              // float64 sum of every client's model
  std::vector<double> echo_factors_;      // r - r_i of the last aggregation's clients
};

}  // namespace

AlgorithmInfo fedawe_info() {
  using O = FedAweOptions;
  using V = ParamValue;
  const ParamTable<O> params{{
      bind_key<O>("server_lr", "eta: the echoed change's step", &O::server_lr).range(0.0, std::nullopt, true),
      bind_key<O>("clip_norm", "the echoed mean's L2 norm is clipped to this (the code's 0.5); 0: no clip (the paper)",
                  &O::clip_norm)
          .range(0.0, std::nullopt),
      bind_key<O>("evaluate", "the global model evaluated: server (the paper's x) or client_mean (the code's)",
                  &O::evaluate),
      bind_key<O>("memory_budget_mb", "the most memory the clients' models may take, counted as N models (MB)",
                  &O::memory_budget_mb)
          .range(0.0, std::nullopt, true),
  }};
  auto info = algorithm_info(
      "fedawe", "FedAWE: clients train from their last received model; changes echoed by the rounds away", params,
      [](const O&) { return make_local_sgd_client(); },
      [](const O& o, const FederationShape& shape) {
        const auto refusal = table_budget_refusal("fedawe", "the last model it received", shape.num_clients,
                                                  shape.model_bytes, o.memory_budget_mb);
        if (!refusal.empty()) throw UserError(refusal);
        return std::make_unique<FedAweServer>(o, std::max<std::uint32_t>(shape.num_clients, 1));
      });
  info.presets = {
      {"code",
       "what the authors' code runs: the echoed mean clipped to 0.5, the mean of all clients' models evaluated",
       {}},
      {"paper",
       "Algorithm 1 as written: no clip, the server's model evaluated",
       {{"clip_norm", V{0.0}}, {"evaluate", V{std::string("server")}}}},
  };
  info.check = params.reading([](const O& o, const FederationShape& shape) {
    return table_budget_refusal("fedawe", "the last model it received", shape.num_clients, shape.model_bytes,
                                o.memory_budget_mb);
  });
  info.sync_only =
      "fedawe echoes each change by the rounds its client was away, and asynchronous aggregations "
      "have no rounds";
  return info;
}

}  // namespace drift
