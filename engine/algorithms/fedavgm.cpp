// FedAvgM (Hsu et al. 2019): FedAvg with server momentum over the mean client change:
//   delta = sum_k a_k (w_k - w), u = beta u + delta, w = w + eta u.
#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/param_helpers.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {
namespace {

class FedAvgMServer final : public ServerAlgorithm {
 public:
  FedAvgMServer(double eta, double beta, std::string weighting)
      : eta_(eta), beta_(beta), weighting_(std::move(weighting)) {}

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
  std::string weighting_;
  std::vector<torch::Tensor> momentum_;
};

class LocalSgd final : public ClientAlgorithm {};

}  // namespace

AlgorithmInfo fedavgm_info() {
  AlgorithmInfo info{
      "fedavgm",
      "FedAvgM: FedAvg with server momentum",
      {number_param("server_lr", 1.0, "server learning rate eta", 0.0, std::nullopt, true),
       number_param("server_momentum", 0.9, "server momentum beta", 0.0, 1.0),
       choice_param("weighting", "samples", {"uniform", "samples"}, "mean of client changes: by samples or uniform")},
      [](const ParamSet&) { return std::make_unique<LocalSgd>(); },
      [](const ParamSet& p, const FederationShape&) {
        return std::make_unique<FedAvgMServer>(p.number("server_lr"), p.number("server_momentum"),
                                               p.string("weighting"));
      }};
  info.packed = plain_local_sgd;
  return info;
}

}  // namespace drift
