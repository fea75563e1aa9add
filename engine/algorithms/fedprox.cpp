// FedProx (Li et al. 2020): FedAvg whose local objective adds (mu/2) * ||w - w_global||^2 over
// all trainable parameters (docs/algorithms.md#fedprox). The server half is FedAvg's.
#include "engine/algorithms/fedprox.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/param_table.hpp"

namespace drift {

torch::Tensor proximal_term(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& anchor,
                            double mu) {
  auto total = torch::zeros({}, params.empty() ? torch::TensorOptions() : params.front().options());
  for (std::size_t i = 0; i < params.size(); ++i) total = total + (params[i] - anchor[i]).pow(2).sum();
  return total * (mu / 2.0);
}

namespace {

class FedProxClient final : public ClientAlgorithm {
 public:
  explicit FedProxClient(double mu) : mu_(mu) {}

  void begin(ClientContext& ctx) override {
    params_.clear();
    anchor_.clear();
    for (auto& p : ctx.model.parameters()) {
      params_.push_back(p);
      anchor_.push_back(p.detach().clone());
    }
  }

  torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) override {
    auto ce = ClientAlgorithm::loss(labels, out, ctx);
    if (mu_ == 0.0) return ce;
    return ce + proximal_term(params_, anchor_, mu_);
  }

 private:
  double mu_;
  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> anchor_;
};

struct FedProxOptions {
  double mu = 0.01;
};

}  // namespace

AlgorithmInfo fedprox_info() {
  using O = FedProxOptions;
  const ParamTable<O> params{
      {bind_key<O>("mu", "weight of the proximal term (mu/2)*||w - w_global||^2", &O::mu).range(0.0, std::nullopt)}};
  auto info = algorithm_info(
      "fedprox", "FedProx: FedAvg with a proximal term pulling local models toward the global one", params,
      [](const O& o) { return std::make_unique<FedProxClient>(o.mu); },
      [](const O&, const FederationShape&) { return make_fedavg_server(); });
  info.packed = params.reading([](const O& o) { return PackedObjective{o.mu}; });
  info.privatisable = true;
  info.edge_tier = true;
  info.edge_moves = true;
  return info;
}

}  // namespace drift
