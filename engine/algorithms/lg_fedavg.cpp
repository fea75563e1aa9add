// LG-FedAvg (Liang et al. 2020), as HtFLlib runs it with heterogeneous models: every client
// keeps its own feature extractor (a private model) and only the classifier head, one shape
// for all thanks to the common feature width, is averaged with FedAvg's sample weights.
//  - Client: starts from the global head when there is one, trains everything with CE,
//    uploads its head.
//  - Server: head = sum_k (n_k / n) head_k over the round's updates.
#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/head_exchange.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {
namespace {

class LgFedAvgClient final : public ClientAlgorithm {
 public:
  void begin(ClientContext& ctx) override { load_head(ctx.model, ctx.task.payload); }
  void end(ClientContext& ctx, ClientUpdate& update) override { put_head(ctx.model, update.payload); }
};

class LgFedAvgServer final : public ServerAlgorithm {
 public:
  Payload broadcast(std::uint32_t) override {
    Payload p;
    p.tensors = head_;
    return p;
  }

  void aggregate(NamedTensors&, const std::vector<ClientUpdate>& updates, const AggregationInput&) override {
    const auto weights = sample_weights(updates);
    std::map<std::string, torch::Tensor> sums;
    for (std::size_t i = 0; i < updates.size(); ++i)
      for (const auto& [name, t] : head_tensors(updates[i].payload)) {
        auto& sum = sums[name];
        const auto term = t.to(torch::kFloat64) * weights[i];
        sum = sum.defined() ? sum + term : term;
      }
    for (auto& [name, sum] : sums) head_[name] = sum.to(torch::kFloat32);
  }
  void archive(StateArchive& ar) override { archive_tensor_map(ar, head_); }

 private:
  std::map<std::string, torch::Tensor> head_;
};

}  // namespace

AlgorithmInfo lg_fedavg_info() {
  AlgorithmInfo info{"lg-fedavg",
                     "LG-FedAvg: private feature extractors, a classifier head averaged as in FedAvg",
                     {},
                     [](const ParamSet&) { return std::make_unique<LgFedAvgClient>(); },
                     [](const ParamSet&, const FederationShape&) { return std::make_unique<LgFedAvgServer>(); }};
  info.private_models = true;
  info.reads_features = true;
  return info;
}

}  // namespace drift
