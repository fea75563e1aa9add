// Adaptive federated optimisation (Reddi et al. 2021; docs/algorithms.md#fedopt). The clients run
// FedAvg's local SGD; the server treats the mean client change as a pseudo-gradient:
//   delta = sum_k a_k (w_k - w), m = b1 m + (1 - b1) delta,
//   v = v + delta^2 (Adagrad) | b2 v + (1 - b2) delta^2 (Adam) | v - (1 - b2) delta^2 sign(v - delta^2) (Yogi),
//   w = w + eta m / (sqrt(v) + tau), with m0 = 0, v0 = tau^2 and no bias correction (the paper's form).
#include <cmath>

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/fedopt.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {

void FedOptServer::aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput&) {
  const auto average = weighted_average(global, updates, update_weights(weighting_, updates));
  torch::NoGradGuard no_grad;
  if (m_.empty()) {
    for (const auto& t : global) {
      m_.push_back(torch::zeros(t.value.sizes(), torch::kFloat64));
      v_.push_back(torch::full(t.value.sizes(), tau_ * tau_, torch::kFloat64));
    }
  }
  double delta2_sum = 0.0, step2_sum = 0.0;
  for (std::size_t i = 0; i < global.size(); ++i) {
    auto& w = global[i].value;
    if (!w.is_floating_point()) {
      w = average[i].value;
      continue;
    }
    const auto delta = average[i].value.to(torch::kFloat64) - w.to(torch::kFloat64);
    const auto delta2 = delta * delta;
    m_[i] = beta1_ * m_[i] + (1.0 - beta1_) * delta;
    switch (rule_) {
      case Rule::adagrad:
        v_[i] = v_[i] + delta2;
        break;
      case Rule::adam:
        v_[i] = beta2_ * v_[i] + (1.0 - beta2_) * delta2;
        break;
      case Rule::yogi:
        v_[i] = v_[i] - (1.0 - beta2_) * delta2 * torch::sign(v_[i] - delta2);
        break;
    }
    const auto step = eta_ * m_[i] / (torch::sqrt(v_[i]) + tau_);
    w = (w.to(torch::kFloat64) + step).to(w.scalar_type());
    delta2_sum += delta2.sum().item<double>();
    step2_sum += (step * step).sum().item<double>();
  }
  delta_norm_ = std::sqrt(delta2_sum);
  step_norm_ = std::sqrt(step2_sum);
}

namespace {

AlgorithmInfo fedopt_info(const std::string& name, FedOptServer::Rule rule, const std::string& description) {
  using O = FedOptOptions;
  const ParamTable<O> params{{
      bind_key<O>("server_lr", "server learning rate eta", &O::server_lr).range(0.0, std::nullopt, true),
      bind_key<O>("beta1", "first-moment decay", &O::beta1).range(0.0, 1.0),
      bind_key<O>("beta2", "second-moment decay (Adam, Yogi)", &O::beta2).range(0.0, 1.0),
      bind_key<O>("tau", "adaptivity (also v0 = tau^2)", &O::tau).range(0.0, std::nullopt, true),
      bind_key<O>("weighting", "mean of client changes: uniform (paper) or by samples", &O::weighting),
  }};
  auto info = algorithm_info(
      name, description, params, [](const O&) { return make_local_sgd_client(); },
      [rule](const O& o, const FederationShape&) { return std::make_unique<FedOptServer>(rule, o); });
  info.packed = plain_local_sgd;
  info.privatisable = true;
  return info;
}

}  // namespace

AlgorithmInfo fedadam_info() {
  return fedopt_info("fedadam", FedOptServer::Rule::adam, "FedAdam: Adam on the server over the mean client change");
}
AlgorithmInfo fedyogi_info() {
  return fedopt_info("fedyogi", FedOptServer::Rule::yogi, "FedYogi: Yogi on the server over the mean client change");
}
AlgorithmInfo fedadagrad_info() {
  return fedopt_info("fedadagrad", FedOptServer::Rule::adagrad,
                     "FedAdagrad: Adagrad on the server over the mean client change");
}

void FedOptServer::archive(StateArchive& ar) {
  archive_tensors(ar, m_);
  archive_tensors(ar, v_);
}

}  // namespace drift
