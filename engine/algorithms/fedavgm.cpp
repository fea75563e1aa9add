// FedAvgM (Hsu et al. 2019): FedAvg with server momentum over the mean client change:
//   delta = sum_k a_k (w_k - w), u = beta u + delta, w = w + eta u.
#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/param_helpers.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {
namespace {

struct FedAvgMOptions {
  double server_lr = 1.0;        // eta
  double server_momentum = 0.9;  // beta
  UpdateWeighting weighting = UpdateWeighting::samples;
};

class FedAvgMServer final : public ServerAlgorithm {
 public:
  explicit FedAvgMServer(const FedAvgMOptions& o)
      : eta_(o.server_lr), beta_(o.server_momentum), weighting_(o.weighting) {}

  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput&) override {
    const auto average = weighted_average(global, updates, update_weights(weighting_, updates));
    torch::NoGradGuard no_grad;
    if (momentum_.empty())
      for (const auto& t : global) momentum_.push_back(torch::zeros(t.value.sizes(), torch::kFloat64));
    for (std::size_t i = 0; i < global.size(); ++i) {
      auto& w = global[i].value;
      if (!w.is_floating_point()) {
        w = average[i].value;
        continue;
      }
      momentum_[i] = beta_ * momentum_[i] + (average[i].value.to(torch::kFloat64) - w.to(torch::kFloat64));
      w = (w.to(torch::kFloat64) + eta_ * momentum_[i]).to(w.scalar_type());
    }
  }
  void archive(StateArchive& ar) override { archive_tensors(ar, momentum_); }

 private:
  double eta_, beta_;
  UpdateWeighting weighting_;
  std::vector<torch::Tensor> momentum_;
};

}  // namespace

AlgorithmInfo fedavgm_info() {
  using O = FedAvgMOptions;
  const ParamTable<O> params{{
      bind_key<O>("server_lr", "server learning rate eta", &O::server_lr).range(0.0, std::nullopt, true),
      bind_key<O>("server_momentum", "server momentum beta", &O::server_momentum).range(0.0, 1.0),
      bind_key<O>("weighting", "mean of client changes: by samples or uniform", &O::weighting),
  }};
  auto info = algorithm_info(
      "fedavgm", "FedAvgM: FedAvg with server momentum", params, [](const O&) { return make_local_sgd_client(); },
      [](const O& o, const FederationShape&) { return std::make_unique<FedAvgMServer>(o); });
  info.packed = plain_local_sgd;
  info.privatisable = true;
  return info;
}

}  // namespace drift
