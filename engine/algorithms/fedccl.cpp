// FedCCL (Qiao et al. 2024; docs/algorithms.md#fedccl), with FPL's conventions where the paper is silent.
//  - Client loss: CE + L_local + L_global, both multi-positive InfoNCE on cos(xi, .)/tau over
//    the batch (sum / B, FPL): L_local against every client's local cluster signals (positives:
//    those of the sample's class), L_global against the one global signal per class. Round 1,
//    or a class without signals: CE only for those samples.
//  - After training: the embeddings of each local class (an eval pass, or the last epoch in
//    train mode as FPL), clustered by FINCH; each cluster mean is one local signal, uploaded as
//    class vectors "fedccl.signals".
//  - Server: per class, all clients' signals (in client order) form the local bank; FINCH on
//    them gives centres G_j^k, and the global signal is their unweighted mean (the de-biasing
//    step). Weights: FedAvg by |D_i|. A class nobody held this round keeps its signals.
#include "engine/algorithms/fedccl.hpp"
#include "engine/tensors/tensor_archive.hpp"

#include <set>

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/contrastive.hpp"
#include "engine/algorithms/finch.hpp"
#include "engine/algorithms/param_table.hpp"

namespace drift {
namespace {

const std::string kSignals = "fedccl.signals", kLocalBank = "fedccl.local", kGlobal = "fedccl.global";

// Stacks class vectors into a bank and a label per row.
void stack_bank(const Payload& payload, const std::string& key, torch::Tensor& bank, torch::Tensor& labels) {
  bank = labels = torch::Tensor();
  auto it = payload.class_vectors.find(key);
  if (it == payload.class_vectors.end() || it->second.empty()) return;
  std::vector<torch::Tensor> rows, tags;
  for (const auto& [c, vectors] : it->second) {
    rows.push_back(vectors.to(torch::kFloat32));
    tags.push_back(
        torch::full({vectors.size(0)}, static_cast<std::int64_t>(c), vectors.options().dtype(torch::kInt64)));
  }
  bank = torch::cat(rows);
  labels = torch::cat(tags);
}

torch::Tensor contrast(const torch::Tensor& xi, const torch::Tensor& labels, const torch::Tensor& bank,
                       const torch::Tensor& bank_labels, double tau) {
  if (!bank.defined() || bank.size(1) != xi.size(1)) return torch::zeros({}, xi.options());
  const auto positive = labels.unsqueeze(1).eq(bank_labels.unsqueeze(0));
  return multi_positive_info_nce(cosine_matrix(xi, bank), positive, tau).sum() / static_cast<double>(xi.size(0));
}

}  // namespace

void FedCCLClient::collect(const torch::Tensor& features, const torch::Tensor& labels) {
  std::set<std::int64_t> classes;
  auto acc = labels.accessor<std::int64_t, 1>();
  for (std::int64_t i = 0; i < labels.size(0); ++i) classes.insert(acc[i]);
  for (auto c : classes) embeddings_[static_cast<std::uint32_t>(c)].push_back(features.index({labels.eq(c)}));
}

void FedCCLClient::begin(ClientContext& ctx) {
  stack_bank(ctx.task.payload, kLocalBank, local_bank_, local_labels_);
  stack_bank(ctx.task.payload, kGlobal, global_bank_, global_labels_);
  embeddings_.clear();
}

torch::Tensor FedCCLClient::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) {
  auto total = ClientAlgorithm::loss(labels, out, ctx);
  if (o_.embedding_pass == KnowledgePass::last_epoch && in_last_local_epoch(ctx)) {
    collect(out.features.detach(), labels);
  }
  if (o_.local_weight > 0.0)
    total = total + o_.local_weight * contrast(out.features, labels, local_bank_, local_labels_, o_.tau);
  if (o_.global_weight > 0.0)
    total = total + o_.global_weight * contrast(out.features, labels, global_bank_, global_labels_, o_.tau);
  return total;
}

void FedCCLClient::end(ClientContext& ctx, ClientUpdate& update) {
  if (o_.embedding_pass == KnowledgePass::after) {
    embeddings_.clear();
    for_each_local_batch(ctx,
                         [&](const ModelOutput& out, const torch::Tensor& labels) { collect(out.features, labels); });
  }
  for (const auto& [c, rows] : embeddings_) {
    const auto points = torch::cat(rows).to(torch::kCPU);
    update.payload.class_vectors[kSignals][c] = cluster_means(points, finch(points));
  }
  embeddings_.clear();
}

Payload FedCCLServer::broadcast(std::uint32_t) {
  Payload p;
  if (!local_signals_.empty()) p.class_vectors[kLocalBank] = local_signals_;
  if (!global_signals_.empty()) p.class_vectors[kGlobal] = global_signals_;
  return p;
}

void FedCCLServer::aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput&) {
  global = weighted_average(global, updates, sample_weights(updates));
  std::map<std::uint32_t, std::vector<torch::Tensor>> per_class;
  for (const auto& u : updates) {
    auto it = u.payload.class_vectors.find(kSignals);
    if (it == u.payload.class_vectors.end()) continue;
    for (const auto& [c, rows] : it->second) per_class[c].push_back(rows.to(torch::kFloat32));
  }
  for (const auto& [c, parts] : per_class) {
    const auto signals = torch::cat(parts);
    local_signals_[c] = signals;
    global_signals_[c] = cluster_means(signals, finch(signals)).mean(0, /*keepdim=*/true);
  }
}

AlgorithmInfo fedccl_info() {
  using O = FedCCLOptions;
  const ParamTable<O> params{{
      bind_key<O>("tau", "temperature of both contrastive terms", &O::tau).range(0.0, std::nullopt, true),
      bind_key<O>("local_weight", "weight of L_local (local cluster signals)", &O::local_weight)
          .range(0.0, std::nullopt),
      bind_key<O>("global_weight", "weight of L_global (global signals)", &O::global_weight).range(0.0, std::nullopt),
      bind_key<O>("embedding_pass",
                  "embeddings for clustering: eval pass after training, or the last epoch in train mode (FPL)",
                  &O::embedding_pass),
  }};
  auto info = algorithm_info(
      "fedccl",
      "FedCCL: FINCH-clustered class signals; contrast against every client's clusters and de-biased global signals",
      params, [](const O& o) { return std::make_unique<FedCCLClient>(o); },
      [](const O&, const FederationShape&) { return std::make_unique<FedCCLServer>(); });
  info.reads_features = true;
  return info;
}

void FedCCLServer::archive(StateArchive& ar) {
  archive_tensor_map(ar, local_signals_);
  archive_tensor_map(ar, global_signals_);
}

}  // namespace drift
