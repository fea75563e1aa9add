// An algorithm from outside drift's source: FedProx, written again as a plugin
// (docs/plugins.md). FedAvg's server; each client adds (mu/2) ||w - w_global||^2 to its loss.
// With the same mu, a run of `fedprox-plugin` is byte-identical to drift's own `fedprox`.
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/compose/plugin.hpp"

namespace {

class ProximalClient final : public drift::ClientAlgorithm {
 public:
  explicit ProximalClient(double mu) : mu_(mu) {}

  // Called before local training: the model then holds the global weights.
  void begin(drift::ClientContext& ctx) override {
    params_.clear();
    anchor_.clear();
    for (auto& p : ctx.model.parameters()) {
      params_.push_back(p);
      anchor_.push_back(p.detach().clone());
    }
  }

  torch::Tensor loss(const torch::Tensor& labels, const drift::ModelOutput& out, drift::ClientContext& ctx) override {
    auto total = ClientAlgorithm::loss(labels, out, ctx);  // cross-entropy
    if (mu_ == 0.0) return total;
    auto proximal = torch::zeros({}, out.logits.options());
    for (std::size_t i = 0; i < params_.size(); ++i) proximal = proximal + (params_[i] - anchor_[i]).pow(2).sum();
    return total + proximal * (mu_ / 2.0);
  }

 private:
  double mu_;
  std::vector<torch::Tensor> params_, anchor_;
};

struct Options {
  double mu = 0.01;
};

drift::AlgorithmInfo fedprox_plugin() {
  const drift::ParamTable<Options> params{
      {drift::bind_key<Options>("mu", "weight of the proximal term (mu/2)||w - w_global||^2", &Options::mu)
           .range(0.0, std::nullopt)}};
  return drift::algorithm_info(
      "fedprox-plugin", "FedProx from a plugin: FedAvg plus a proximal term (docs/examples/plugin)", params,
      [](const Options& o) { return std::make_unique<ProximalClient>(o.mu); },
      [](const Options&, const drift::FederationShape&) { return drift::make_fedavg_server(); });
}

}  // namespace

DRIFT_PLUGIN(registry) { registry.algorithm(fedprox_plugin()); }
