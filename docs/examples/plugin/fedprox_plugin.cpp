// An algorithm, a model and a sampler from outside drift's source (docs/plugins.md):
// - `fedprox-plugin`: FedProx written again. FedAvg's server; each client adds
//   (mu/2) ||w - w_global||^2 to its loss. With the same mu, a run is byte-identical to drift's
//   own `fedprox`.
// - `mlp-plugin`: a perceptron with one hidden layer of 200 units, as a drift Model: its
//   backbone gives the features, and drift puts the head the algorithm asks for on them.
// - `highest-loss`: a sampler that takes the eligible clients whose last training loss was
//   highest, those never trained first (or last, with its parameter untried_first = false).
#include <algorithm>
#include <cmath>

#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/compose/plugin.hpp"
#include "engine/population/population.hpp"

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

// The backbone: flatten, Linear(inputs, 200), ReLU. build_head adds the classifier (or MOON's
// projection, FedNH's cosine head, ...) and must come last, so its tensors follow the backbone's.
class Mlp final : public drift::Model {
 public:
  Mlp(const std::vector<std::int64_t>& input_shape, std::int64_t num_classes, const drift::ModelOptions& options) {
    std::int64_t inputs = 1;
    for (auto d : input_shape) inputs *= d;
    hidden_ = register_module("hidden", torch::nn::Linear(inputs, 200));
    build_head(200, num_classes, options);
  }

 protected:
  drift::Extracted extract(const torch::Tensor& x, bool /*levels*/) override {
    drift::Extracted out;
    out.features = torch::relu(hidden_->forward(x.flatten(1)));
    return out;
  }

 private:
  torch::nn::Linear hidden_{nullptr};
};

drift::ModelInfo mlp_plugin() {
  drift::ModelInfo info;
  info.name = "mlp-plugin";
  info.description = "a perceptron with one hidden layer of 200 units, from a plugin (docs/examples/plugin)";
  info.make = [](const std::vector<std::int64_t>& input_shape, std::int64_t num_classes,
                 const drift::ModelOptions& options) {
    return std::make_shared<Mlp>(input_shape, num_classes, options);
  };
  return info;
}

// Deterministic and without state of its own (the losses are the simulation's), so there is
// nothing to archive; a sampler that draws at random uses the seed's streams, as drift's do.
class HighestLoss final : public drift::Sampler {
 public:
  HighestLoss(std::uint32_t population, bool untried_first) : population_(population), untried_first_(untried_first) {}

  std::vector<std::uint32_t> select(const drift::SelectionContext& ctx) override {
    std::vector<std::pair<double, std::uint32_t>> ranked;  // (-loss, id): highest loss first
    const double untried = untried_first_ ? -INFINITY : INFINITY;
    for (std::uint32_t c = 0; c < population_; ++c) {
      if (!ctx.eligible(c)) continue;
      const double loss = ctx.last_loss != nullptr && c < ctx.last_loss->size() ? (*ctx.last_loss)[c] : NAN;
      ranked.emplace_back(std::isnan(loss) ? untried : -loss, c);
    }
    std::sort(ranked.begin(), ranked.end());
    std::vector<std::uint32_t> chosen;
    for (std::size_t i = 0; i < ranked.size() && chosen.size() < ctx.count; ++i) chosen.push_back(ranked[i].second);
    std::sort(chosen.begin(), chosen.end());  // samplers return ascending ids
    return chosen;
  }
  void archive(drift::StateArchive&) override {}

 private:
  std::uint32_t population_;
  bool untried_first_;
};

// The sampler's parameters: members with their defaults, bound to keys of [sampler].
struct HighestLossOptions {
  bool untried_first = true;
};

drift::SamplerInfo highest_loss() {
  const drift::ParamTable<HighestLossOptions> params({drift::bind_key<HighestLossOptions>(
      "untried_first", "rank clients that never trained before every other (false: after)",
      &HighestLossOptions::untried_first)});
  // It chooses by the clients' losses: differential privacy must not claim amplification, nor
  // a per-client count of releases, for a run that uses it (docs/privacy.md).
  return drift::sampler_info(
      "highest-loss", "the eligible clients with the highest last training loss, untrained ones first (a plugin)",
      params,
      [](const HighestLossOptions& o, const drift::Scenario&, const drift::Population& population) {
        return std::make_unique<HighestLoss>(population.size(), o.untried_first);
      },
      drift::SamplingDesign::none, "training losses");
}

}  // namespace

DRIFT_PLUGIN(registry) {
  registry.algorithm(fedprox_plugin());
  registry.model(mlp_plugin());
  registry.sampler(highest_loss());
}
