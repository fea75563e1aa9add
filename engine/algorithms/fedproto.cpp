// FedProto (Tan et al. 2022; docs/algorithms.md#fedproto), in two forms: `fedproto`, homogeneous (as
// FedSKC and FedCCL compare against it), averages the weights as in FedAvg and shares class
// prototypes (mean penultimate features per class) besides; `fedproto-ht`, the original
// heterogeneous form, shares only the prototypes and clients keep private models.
// `feddistill` (Jeong et al. 2018, as in HtFLlib) is the same scheme on the logits: clients
// upload per-class mean logits and pull their logits toward the global ones.
//  - Client loss: CE + lambda * MSE(z, P^y) over the samples whose class has a global prototype.
//  - Local prototypes: mean of the (detached) features of each class over all local steps,
//    uploaded as class vectors "prototypes" (one [1, d] row per class held).
//  - Server: P^c = unweighted mean of the uploaded prototypes of class c (PFLlib, FPL); a
//    class nobody uploaded keeps its last prototype.
#include "engine/algorithms/fedproto.hpp"
#include "engine/tensors/tensor_archive.hpp"

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/param_table.hpp"

namespace drift {

void FedProtoClient::begin(ClientContext& ctx) {
  global_ = {};
  auto it = ctx.task.payload.class_vectors.find(key());
  if (it != ctx.task.payload.class_vectors.end()) global_ = it->second;
  means_.clear();
  prototypes_ = torch::Tensor();
}

torch::Tensor FedProtoClient::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) {
  auto total = ClientAlgorithm::loss(labels, out, ctx);
  const auto& z_all = target_ == ClassMeanTarget::logits ? out.logits : out.features;
  const auto classes = out.logits.size(1), dim = z_all.size(1);
  if (!prototypes_.defined()) {
    prototypes_ = torch::zeros({classes, dim}, z_all.options());
    has_prototype_ = torch::zeros({classes}, z_all.options().dtype(torch::kBool));
    for (const auto& [c, rows] : global_) {
      if (c >= classes || rows.size(1) != dim) continue;
      prototypes_[c] = rows[0].to(torch::kFloat32);
      has_prototype_[c] = true;
    }
  }
  means_.add(z_all, labels);
  const auto mask = has_prototype_.index_select(0, labels);
  if (lambda_ == 0.0 || !mask.any().item<bool>()) return total;
  const auto z = z_all.index({mask});
  const auto target = prototypes_.index_select(0, labels.index({mask}));
  return total + lambda_ * torch::nn::functional::mse_loss(z, target);
}

namespace {
const char* key_of(ClassMeanTarget target) { return target == ClassMeanTarget::logits ? "logits" : "prototypes"; }
}  // namespace

const char* FedProtoClient::key() const { return key_of(target_); }

void FedProtoClient::end(ClientContext&, ClientUpdate& update) {
  if (!means_.empty()) update.payload.class_vectors[key()] = means_.means();
}

Payload FedProtoServer::broadcast(std::uint32_t) {
  Payload p;
  for (const auto& [c, row] : prototypes_) p.class_vectors[key_of(target_)][c] = row;
  return p;
}

void FedProtoServer::aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                               const AggregationInput&) {
  if (average_weights_) global = weighted_average(global, updates, sample_weights(updates));
  std::map<std::uint32_t, std::pair<torch::Tensor, int>> sums;
  for (const auto& u : updates) {
    auto it = u.payload.class_vectors.find(key_of(target_));
    if (it == u.payload.class_vectors.end()) continue;
    for (const auto& [c, rows] : it->second) {
      auto& [sum, n] = sums[c];
      sum = sum.defined() ? sum + rows.to(torch::kFloat64) : rows.to(torch::kFloat64);
      ++n;
    }
  }
  for (auto& [c, entry] : sums) prototypes_[c] = (entry.first / entry.second).to(torch::kFloat32);
}

namespace {

// The weight of the pull toward the global class means: FedProto's and FedDistill's default,
// and the heterogeneous form's (HtFLlib uses 0.1).
struct ClassMeanPull {
  double lambda = 1.0;
};
struct HeterogeneousPull {
  double lambda = 0.1;
};

template <class O>
ParamTable<O> pull_params(const std::string& help) {
  return {{bind_key<O>("lambda", help, &O::lambda).range(0.0, std::nullopt)}};
}

}  // namespace

AlgorithmInfo fedproto_info() {
  auto info = algorithm_info(
      "fedproto", "FedProto: FedAvg plus class prototypes; local loss pulls features toward the global prototype",
      pull_params<ClassMeanPull>("weight of the prototype MSE term"),
      [](const ClassMeanPull& o) { return std::make_unique<FedProtoClient>(o.lambda); },
      [](const ClassMeanPull&, const FederationShape&) { return std::make_unique<FedProtoServer>(); });
  info.reads_features = true;
  return info;
}

AlgorithmInfo fedproto_ht_info() {
  auto info = algorithm_info(
      "fedproto-ht", "FedProto, heterogeneous form: private models, only class prototypes are shared",
      pull_params<HeterogeneousPull>("weight of the prototype MSE term (HtFLlib: 0.1)"),
      [](const HeterogeneousPull& o) { return std::make_unique<FedProtoClient>(o.lambda); },
      [](const HeterogeneousPull&, const FederationShape&) { return std::make_unique<FedProtoServer>(false); });
  info.private_models = true;
  info.reads_features = true;
  return info;
}

AlgorithmInfo feddistill_info() {
  auto info = algorithm_info(
      "feddistill", "FedDistill: private models; per-class mean logits are shared and local logits pulled toward them",
      pull_params<ClassMeanPull>("weight of the logit MSE term"),
      [](const ClassMeanPull& o) { return std::make_unique<FedProtoClient>(o.lambda, ClassMeanTarget::logits); },
      [](const ClassMeanPull&, const FederationShape&) {
        return std::make_unique<FedProtoServer>(false, ClassMeanTarget::logits);
      });
  info.private_models = true;
  return info;
}

void FedProtoServer::archive(StateArchive& ar) { archive_tensor_map(ar, prototypes_); }

}  // namespace drift
