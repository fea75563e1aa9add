#pragma once
#include "engine/algorithms/algorithm.hpp"

namespace drift {

// The server half of FedAdagrad, FedAdam and FedYogi (exposed for unit tests).
class FedOptServer final : public ServerAlgorithm {
 public:
  enum class Rule { adagrad, adam, yogi };
  FedOptServer(Rule rule, double eta, double beta1, double beta2, double tau, std::string weighting)
      : rule_(rule), eta_(eta), beta1_(beta1), beta2_(beta2), tau_(tau), weighting_(std::move(weighting)) {}
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override;
  void archive(StateArchive& ar) override;
  // The L2 norms of the pseudo-gradient (mean client change) and of the server's step.
  AlgorithmMetrics metrics() const override { return {{{"delta_norm", delta_norm_}, {"step_norm", step_norm_}}, {}}; }

 private:
  Rule rule_;
  double eta_, beta1_, beta2_, tau_;
  std::string weighting_;
  std::vector<torch::Tensor> m_, v_;  // float64, one per state tensor
  double delta_norm_ = 0.0, step_norm_ = 0.0;
};

}  // namespace drift
