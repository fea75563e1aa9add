// FedNova (Wang et al., NeurIPS 2020): clients that take different numbers of local steps pull
// the plain average towards the ones that took more (objective inconsistency). FedNova divides
// each client's change by its local normaliser a_i (its step count under plain SGD) and steps
// along the weighted mean of those normalised changes, scaled by tau_eff = sum_i p_i a_i:
//   x <- x - tau_eff * sum_i p_i (x - y_i) / a_i
// docs/algorithms.md#fednova, and where the authors' code (JYWa/FedNova) differs.
#include <algorithm>
#include <functional>

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/core/error.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {

double fednova_normaliser(std::uint32_t steps, double momentum) {
  // The authors' optimiser: a counter c_k = rho c_{k-1} + 1 summed over the steps, so that
  // a_i = (tau_i - rho (1 - rho^tau_i) / (1 - rho)) / (1 - rho); tau_i itself without momentum.
  if (momentum == 0.0) return static_cast<double>(steps);
  double counter = 0.0, sum = 0.0;
  for (std::uint32_t k = 0; k < steps; ++k) {
    counter = counter * momentum + 1.0;
    sum += counter;
  }
  return sum;
}

namespace {

struct FedNovaOptions {
  double server_momentum = 0.0;  // the code's gmf: momentum on the normalised step, in units of the local lr
};

class FedNovaServer final : public ServerAlgorithm {
 public:
  FedNovaServer(const FedNovaOptions& o, const FederationShape& shape)
      : gmf_(o.server_momentum), momentum_(shape.local_momentum), local_lr_(shape.local_lr) {}

  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override {
    const auto p = sample_weights(updates);
    coefficients_ = step_coefficients(updates, p);
    // Equal normalisers make the step the plain average: computed as FedAvg computes it, so
    // that the two give the same bits (docs/algorithms.md#fednova).
    if (gmf_ == 0.0 &&
        std::adjacent_find(normalisers_.begin(), normalisers_.end(), std::not_equal_to<>()) == normalisers_.end()) {
      global = weighted_average(global, updates, p);
      return;
    }
    torch::NoGradGuard no_grad;
    if (buffer_.empty() && gmf_ != 0.0)
      for (const auto& t : global) buffer_.push_back(torch::zeros(t.value.sizes(), torch::kFloat64));
    const double lr = local_lr_ ? local_lr_(input.round) : 1.0;
    for (std::size_t t = 0; t < global.size(); ++t) {
      auto& x = global[t].value;
      if (!x.is_floating_point()) {
        x = updates.front().weights[t].value.clone();  // counters: taken, as weighted_average does
        continue;
      }
      const auto x64 = x.to(torch::kFloat64);
      auto step = torch::zeros_like(x64);
      for (std::size_t i = 0; i < updates.size(); ++i)
        if (coefficients_[i] != 0.0) step += coefficients_[i] * (x64 - updates[i].weights[t].value.to(torch::kFloat64));
      if (gmf_ != 0.0) {
        buffer_[t] = gmf_ * buffer_[t] + step / lr;
        step = lr * buffer_[t];
      }
      x = (x64 - step).to(x.scalar_type());
    }
  }

  // Each client's coefficient on its change: p_i tau_eff / a_i.
  ClientShares shares(const std::vector<ClientUpdate>& updates) const override {
    ClientShares out;
    for (std::size_t i = 0; i < updates.size(); ++i) out.emplace_back(updates[i].client_id, coefficients_.at(i));
    return out;
  }

  AlgorithmMetrics metrics() const override {
    AlgorithmMetrics m;
    m.scalars["tau_eff"] = tau_eff_;
    m.per_client["normaliser"] = normalisers_;
    return m;
  }

  void archive(StateArchive& ar) override { archive_tensors(ar, buffer_); }

 private:
  // p_i tau_eff / a_i, and tau_eff = sum_i p_i a_i; a client that took no step changed nothing.
  std::vector<double> step_coefficients(const std::vector<ClientUpdate>& updates, const std::vector<double>& p) {
    normalisers_.clear();
    tau_eff_ = 0.0;
    for (std::size_t i = 0; i < updates.size(); ++i) {
      normalisers_.push_back(fednova_normaliser(updates[i].metrics.steps, momentum_));
      tau_eff_ += p[i] * normalisers_.back();
    }
    std::vector<double> c;
    for (std::size_t i = 0; i < updates.size(); ++i)
      c.push_back(normalisers_[i] > 0.0 ? p[i] * tau_eff_ / normalisers_[i] : 0.0);
    return c;
  }

  double gmf_;
  double momentum_;
  std::function<double(std::uint32_t)> local_lr_;
  std::vector<double> coefficients_, normalisers_;
  double tau_eff_ = 0.0;
  std::vector<torch::Tensor> buffer_;  // the server momentum (gmf), float64
};

}  // namespace

AlgorithmInfo fednova_info() {
  using O = FedNovaOptions;
  const ParamTable<O> params{{
      bind_key<O>("server_momentum", "momentum on the normalised step (the code's gmf); 0 = none", &O::server_momentum)
          .range(0.0, 1.0),
  }};
  auto info = algorithm_info(
      "fednova", "FedNova: normalised averaging of client changes by their local steps (unequal local work)", params,
      [](const O&) { return make_local_sgd_client(); },
      [](const O& o, const FederationShape& shape) { return std::make_unique<FedNovaServer>(o, shape); });
  info.packed = plain_local_sgd;
  info.edge_tier = true;
  info.edge_moves = true;
  info.sync_only =
      "FedNova normalises a sync round's updates by their local steps; FedAsync and FedBuff mix updates by "
      "staleness instead";
  return info;
}

}  // namespace drift
