#pragma once
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/param_helpers.hpp"

namespace drift {

struct FedOptOptions {
  double server_lr = 0.01;  // eta
  double beta1 = 0.9;
  double beta2 = 0.99;  // Adam, Yogi
  double tau = 1e-3;    // adaptivity; v0 = tau^2
  UpdateWeighting weighting = UpdateWeighting::uniform;
};

// The server half of FedAdagrad, FedAdam and FedYogi (exposed for unit tests).
class FedOptServer final : public ServerAlgorithm {
 public:
  enum class Rule { adagrad, adam, yogi };
  FedOptServer(Rule rule, const FedOptOptions& o)
      : rule_(rule), eta_(o.server_lr), beta1_(o.beta1), beta2_(o.beta2), tau_(o.tau), weighting_(o.weighting) {}
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override;
  void archive(StateArchive& ar) override;
  // The L2 norms of the pseudo-gradient (mean client change) and of the server's step.
  AlgorithmMetrics metrics() const override { return {{{"delta_norm", delta_norm_}, {"step_norm", step_norm_}}, {}}; }

 private:
  Rule rule_;
  double eta_, beta1_, beta2_, tau_;
  UpdateWeighting weighting_;
  std::vector<torch::Tensor> m_, v_;  // float64, one per state tensor
  double delta_norm_ = 0.0, step_norm_ = 0.0;
};

}  // namespace drift
