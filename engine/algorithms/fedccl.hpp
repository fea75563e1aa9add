#pragma once
#include <map>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/class_means.hpp"

namespace drift {

struct FedCCLOptions {
  double tau = 0.07;
  double local_weight = 1.0, global_weight = 1.0;
  KnowledgePass embedding_pass = KnowledgePass::after;  // eval pass after, or the last epoch (FPL)
};

class FedCCLClient final : public ClientAlgorithm {
 public:
  explicit FedCCLClient(FedCCLOptions o) : o_(std::move(o)) {}
  void begin(ClientContext& ctx) override;
  torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) override;
  void end(ClientContext& ctx, ClientUpdate& update) override;

 private:
  void collect(const torch::Tensor& features, const torch::Tensor& labels);  // into embeddings_

  FedCCLOptions o_;
  torch::Tensor local_bank_, local_labels_;                         // every client's cluster signals, [N, d], [N]
  torch::Tensor global_bank_, global_labels_;                       // one de-biased signal per class
  std::map<std::uint32_t, std::vector<torch::Tensor>> embeddings_;  // per class, batch by batch
};

class FedCCLServer final : public ServerAlgorithm {
 public:
  Payload broadcast(std::uint32_t round) override;
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override;
  void archive(StateArchive& ar) override;

 private:
  std::map<std::uint32_t, torch::Tensor> local_signals_;   // class -> [n, d], all clients' clusters
  std::map<std::uint32_t, torch::Tensor> global_signals_;  // class -> [1, d]
};

}  // namespace drift
