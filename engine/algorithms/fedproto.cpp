// FedProto (Tan et al. 2022), spec section 6.6, in its homogeneous-model form (as FedSKC and
// FedCCL compare against it): the weights are averaged as in FedAvg, and class prototypes
// (mean penultimate features per class) are shared besides.
//  - Client loss: CE + lambda * MSE(z, P^y) over the samples whose class has a global prototype.
//  - Local prototypes: mean of the (detached) features of each class over all local steps,
//    uploaded as class vectors "prototypes" (one [1, d] row per class held).
//  - Server: P^c = unweighted mean of the uploaded prototypes of class c (PFLlib, FPL); a
//    class nobody uploaded keeps its last prototype.
#include "engine/algorithms/fedproto.hpp"

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/param_helpers.hpp"

namespace drift {

void FedProtoClient::begin(ClientContext& ctx) {
  global_ = {};
  auto it = ctx.task.payload.class_vectors.find("prototypes");
  if (it != ctx.task.payload.class_vectors.end()) global_ = it->second;
  means_.clear();
  prototypes_ = torch::Tensor();
}

torch::Tensor FedProtoClient::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) {
  auto total = ClientAlgorithm::loss(labels, out, ctx);
  const auto classes = out.logits.size(1), dim = out.features.size(1);
  if (!prototypes_.defined()) {
    prototypes_ = torch::zeros({classes, dim}, out.features.options());
    has_prototype_ = torch::zeros({classes}, out.features.options().dtype(torch::kBool));
    for (const auto& [c, rows] : global_) {
      if (c >= classes || rows.size(1) != dim) continue;
      prototypes_[c] = rows[0].to(torch::kFloat32);
      has_prototype_[c] = true;
    }
  }
  means_.add(out.features, labels);
  const auto mask = has_prototype_.index_select(0, labels);
  if (lambda_ == 0.0 || !mask.any().item<bool>()) return total;
  const auto z = out.features.index({mask});
  const auto target = prototypes_.index_select(0, labels.index({mask}));
  return total + lambda_ * torch::nn::functional::mse_loss(z, target);
}

void FedProtoClient::end(ClientContext&, ClientUpdate& update) {
  if (!means_.empty()) update.payload.class_vectors["prototypes"] = means_.means();
}

Payload FedProtoServer::broadcast(std::uint32_t) {
  Payload p;
  for (const auto& [c, row] : prototypes_) p.class_vectors["prototypes"][c] = row;
  return p;
}

void FedProtoServer::aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, std::uint32_t) {
  global = weighted_average(global, updates, sample_weights(updates));
  std::map<std::uint32_t, std::pair<torch::Tensor, int>> sums;
  for (const auto& u : updates) {
    auto it = u.payload.class_vectors.find("prototypes");
    if (it == u.payload.class_vectors.end()) continue;
    for (const auto& [c, rows] : it->second) {
      auto& [sum, n] = sums[c];
      sum = sum.defined() ? sum + rows.to(torch::kFloat64) : rows.to(torch::kFloat64);
      ++n;
    }
  }
  for (auto& [c, entry] : sums) prototypes_[c] = (entry.first / entry.second).to(torch::kFloat32);
}


AlgorithmInfo fedproto_info() {
  return {"fedproto",
          "FedProto: FedAvg plus class prototypes; local loss pulls features toward the global prototype",
          {number_param("lambda", 1.0, "weight of the prototype MSE term", 0.0)},
          [](const ParamSet& p) { return std::make_unique<FedProtoClient>(p.number("lambda")); },
          [](const ParamSet&, const FederationShape&) { return std::make_unique<FedProtoServer>(); }};
}

}  // namespace drift
