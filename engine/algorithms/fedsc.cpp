// FedSC (docs/algorithms.md#fedsc). The paper's formulas are reconstructed from its prose;
// the `reference` preset follows what the released code computes: raw client
// prototypes instead of relational ones, CPDR inactive, the sample itself as the RPCL
// positive and negatives pooled over the batch, prototypes from the last local epoch.
#include "engine/algorithms/fedsc.hpp"
#include "engine/tensors/tensor_archive.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/contrastive.hpp"
#include "engine/algorithms/param_helpers.hpp"
#include "engine/algorithms/param_table.hpp"

namespace drift::fedsc {

torch::Tensor relational_prototypes(const torch::Tensor& rows, const torch::Tensor& global, std::int64_t neighbours,
                                    NeighbourRule rule) {
  const auto x = rows.to(torch::kFloat64);
  const auto n = x.size(0);
  const auto theta =
      torch::acos(cosine_matrix(x, global.to(torch::kFloat64).reshape({1, -1})).squeeze(1).clamp(-1.0, 1.0));
  std::vector<double> angle(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) angle[static_cast<std::size_t>(k)] = theta[k].item<double>();
  const auto m = std::min<std::int64_t>(neighbours, n - 1);
  auto out = torch::empty_like(x);
  for (std::int64_t k = 0; k < n; ++k) {
    auto key = [&](std::int64_t i) {
      const double a = angle[static_cast<std::size_t>(i)];
      return rule == NeighbourRule::global ? a : std::abs(a - angle[static_cast<std::size_t>(k)]);
    };
    std::vector<std::int64_t> others;
    for (std::int64_t i = 0; i < n; ++i)
      if (i != k) others.push_back(i);
    std::stable_sort(others.begin(), others.end(), [&](std::int64_t a, std::int64_t b) { return key(a) < key(b); });
    auto merged = x[k].clone();
    for (std::int64_t i = 0; i < m; ++i) merged += x[others[static_cast<std::size_t>(i)]];
    out[k] = merged / static_cast<double>(m + 1);
  }
  return out;
}

double label_discrepancy(const torch::Tensor& counts) {
  const auto c = counts.to(torch::kFloat64);
  const double total = c.sum().item<double>();
  if (total <= 0.0) return 0.0;
  const auto q = c / total - 1.0 / static_cast<double>(c.numel());
  return std::sqrt(0.5 * q.pow(2).sum().item<double>());
}

std::vector<double> consistency_weights(const std::vector<double>& discrepancy, const std::vector<double>& samples) {
  const double d_sum = std::accumulate(discrepancy.begin(), discrepancy.end(), 0.0);
  const double n_sum = std::accumulate(samples.begin(), samples.end(), 0.0);
  std::vector<double> e(discrepancy.size());
  double total = 0.0;
  for (std::size_t k = 0; k < e.size(); ++k) {
    const double a = d_sum > 0.0 ? discrepancy[k] / d_sum : 0.0;
    const double b = n_sum > 0.0 ? samples[k] / n_sum : 0.0;
    e[k] = 1.0 / (1.0 + std::exp(-(b - a)));
    total += e[k];
  }
  for (auto& v : e) v /= total;
  return e;
}

torch::Tensor rpcl_loss(const torch::Tensor& z, const torch::Tensor& labels, const torch::Tensor& bank,
                        const torch::Tensor& bank_classes, const torch::Tensor& u, const ClientOptions& o) {
  auto sims = cosine_matrix(z, bank);
  if (u.defined()) sims = sims / u.unsqueeze(0);
  const auto same = bank_classes.unsqueeze(0).eq(labels.unsqueeze(1));  // [B, P]
  if (!o.self_positive) return multi_positive_info_nce(sims, same, o.tau).mean();
  auto negative = same.logical_not();
  if (o.pooled_negatives) negative = negative.any(0, /*keepdim=*/true).expand_as(negative);
  const auto logits = (sims / o.tau).masked_fill(negative.logical_not(), -1e30);
  const double positive = 1.0 / o.tau;
  auto per_sample =
      torch::logaddexp(torch::logsumexp(logits, 1), torch::full({z.size(0)}, positive, z.options())) - positive;
  // A sample with no negative at all has loss log(1 + 0) = 0 up to rounding; make it exact.
  per_sample = torch::where(negative.any(1), per_sample, torch::zeros_like(per_sample));
  return per_sample.mean();
}

torch::Tensor cpdr_loss(const torch::Tensor& z, const torch::Tensor& labels, const torch::Tensor& consistent,
                        const torch::Tensor& has) {
  const auto mask = has.index_select(0, labels).to(z.scalar_type());
  const auto target = consistent.index_select(0, labels);
  return ((z - target).pow(2).mean(1) * mask).mean();
}

// ---------------------------------------------------------------------------------------------
// Client

void Client::begin(ClientContext& ctx) {
  bank_ = bank_classes_ = consistent_ = has_ = torch::Tensor();
  means_.clear();
  const auto& vectors = ctx.task.payload.class_vectors;
  if (auto it = vectors.find("relational"); it != vectors.end() && !it->second.empty()) {
    std::vector<torch::Tensor> rows;
    std::vector<std::int64_t> classes;
    for (const auto& [c, r] : it->second) {
      rows.push_back(r.to(torch::kFloat32));
      classes.insert(classes.end(), static_cast<std::size_t>(r.size(0)), c);
    }
    bank_ = torch::cat(rows);
    bank_classes_ = torch::tensor(classes).to(ctx.device);
  }
  if (auto it = vectors.find("consistent"); it != vectors.end() && !it->second.empty()) {
    const auto k = std::max<std::int64_t>(ctx.data ? ctx.data->num_classes : 0, it->second.rbegin()->first + 1);
    consistent_ = torch::zeros({k, it->second.begin()->second.size(1)}, torch::TensorOptions().device(ctx.device));
    has_ = torch::zeros({k}, torch::TensorOptions().dtype(torch::kBool).device(ctx.device));
    for (const auto& [c, r] : it->second) {
      consistent_[c] = r[0].to(torch::kFloat32);
      has_[c] = true;
    }
  }
}

torch::Tensor Client::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) {
  if (o_.knowledge_pass == KnowledgePass::last_epoch && in_last_local_epoch(ctx))
    means_.add(out.features, labels, ctx.data->num_classes);
  auto total = ClientAlgorithm::loss(labels, out, ctx);
  if (o_.rpcl && bank_.defined()) {
    torch::Tensor u;
    if (o_.normalize) u = torch::cdist(out.features.detach(), bank_).mean(0).clamp_min(1e-6);
    total = total + o_.rpcl_weight * rpcl_loss(out.features, labels, bank_, bank_classes_, u, o_);
  }
  if (o_.cpdr && consistent_.defined() && labels.max().item<std::int64_t>() < has_.size(0))
    total = total + o_.cpdr_weight * cpdr_loss(out.features, labels, consistent_, has_);
  return total;
}

void Client::end(ClientContext& ctx, ClientUpdate& update) {
  if (o_.knowledge_pass == KnowledgePass::after) {
    means_.clear();
    for_each_local_batch(
        ctx, [&](const ModelOutput& out, const torch::Tensor& labels) { means_.add(out.features, labels); });
  }
  if (!means_.empty()) update.payload.class_vectors["prototypes"] = means_.means();
  // The label histogram: the discrepancy weights need it (as the released code uploads it).
  if (ctx.data != nullptr && ctx.indices != nullptr) {
    const auto idx = torch::tensor(*ctx.indices, torch::kInt64).to(ctx.data->labels.device());
    update.payload.tensors["label_counts"] =
        torch::bincount(ctx.data->labels.index_select(0, idx), {}, ctx.data->num_classes).to(torch::kFloat32);
  }
}

// ---------------------------------------------------------------------------------------------
// Server

Payload Server::broadcast(std::uint32_t) {
  Payload p;
  for (const auto& [c, rows] : relational_) p.class_vectors["relational"][c] = rows.to(torch::kFloat32);
  for (const auto& [c, v] : consistent_) p.class_vectors["consistent"][c] = v.to(torch::kFloat32).reshape({1, -1});
  return p;
}

void Server::aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput&) {
  global = weighted_average(global, updates, sample_weights(updates));

  std::vector<double> discrepancy, samples;
  for (const auto& u : updates) {
    auto it = u.payload.tensors.find("label_counts");
    discrepancy.push_back(it == u.payload.tensors.end() ? 0.0 : label_discrepancy(it->second));
    samples.push_back(static_cast<double>(u.num_samples));
  }
  const auto weights = consistency_weights(discrepancy, samples);
  last_weights_ = weights;

  // Per class: the holders' prototypes (client-id order) and their consistency weights.
  std::map<std::uint32_t, std::vector<torch::Tensor>> rows;
  std::map<std::uint32_t, std::vector<double>> row_weights;
  for (std::size_t k = 0; k < updates.size(); ++k) {
    auto it = updates[k].payload.class_vectors.find("prototypes");
    if (it == updates[k].payload.class_vectors.end()) continue;
    for (const auto& [c, p] : it->second) {
      rows[c].push_back(p.reshape({-1}).to(torch::kFloat64));
      row_weights[c].push_back(weights[k]);
    }
  }
  if (!o_.keep_stale) relational_.clear(), consistent_.clear();
  for (const auto& [c, list] : rows) {
    const auto stacked = torch::stack(list);
    const auto relational =
        o_.merge ? relational_prototypes(stacked, stacked.mean(0), o_.neighbours, o_.rule) : stacked;
    const auto& w = row_weights[c];
    const double w_sum = std::accumulate(w.begin(), w.end(), 0.0);
    auto cc = torch::zeros({stacked.size(1)}, torch::kFloat64);
    for (std::size_t i = 0; i < w.size(); ++i) cc += relational[static_cast<std::int64_t>(i)] * (w[i] / w_sum);
    relational_[c] = relational;
    consistent_[c] = cc;
  }
}

void Server::archive(StateArchive& ar) {
  archive_tensor_map(ar, relational_);
  archive_tensor_map(ar, consistent_);
}

}  // namespace drift::fedsc

namespace drift {

AlgorithmInfo fedsc_info() {
  using V = ParamValue;
  using fedsc::ClientOptions, fedsc::ServerOptions, fedsc::Options;
  constexpr auto client = &Options::client;
  constexpr auto server = &Options::server;
  // clang-format off
  const ParamTable<Options> params{{
      bind_key<Options>("rpcl", "module: relational prototype contrastive learning", client, &ClientOptions::rpcl),
      bind_key<Options>("cpdr", "module: consistent prototype discrepancy regularisation", client, &ClientOptions::cpdr),
      bind_key<Options>("tau", "RPCL temperature", client, &ClientOptions::tau).range(0.0, std::nullopt, true),
      bind_key<Options>("rpcl_weight", "weight of RPCL", client, &ClientOptions::rpcl_weight).range(0.0, std::nullopt),
      bind_key<Options>("cpdr_weight", "weight of CPDR", client, &ClientOptions::cpdr_weight).range(0.0, std::nullopt),
      bind_key<Options>("M", "neighbours merged into each relational prototype (< cohort)", server,
                        &ServerOptions::neighbours).range(1.0, std::nullopt),
      bind_key<Options>("neighbour_rule",
                        "nearest by angular difference to client k, or the clients closest to the global prototype",
                        server, &ServerOptions::rule),
      bind_key<Options>("merge", "merge prototypes into relational ones (off: raw client prototypes, as the code)",
                        server, &ServerOptions::merge),
      bind_key<Options>("normalize", "divide cosines by the mean distance to each prototype (U)", client,
                        &ClientOptions::normalize),
      bind_key<Options>("self_positive", "the sample itself is the RPCL positive (released code)", client,
                        &ClientOptions::self_positive),
      bind_key<Options>("pooled_negatives", "RPCL negatives pooled over the batch's labels (released code)", client,
                        &ClientOptions::pooled_negatives),
      bind_key<Options>("knowledge_pass",
                        "prototypes from an eval pass after training, or collected during the last epoch", client,
                        &ClientOptions::knowledge_pass),
      bind_key<Options>("keep_stale", "a class nobody held this round keeps its prototypes", server,
                        &ServerOptions::keep_stale),
  }};
  // clang-format on
  auto info = algorithm_info(
      "fedsc", "FedSC: relational prototypes (RPCL) and consistent prototypes (CPDR) on features, FedAvg weights",
      params, [](const Options& o) { return std::make_unique<fedsc::Client>(o.client); },
      [](const Options& o, const FederationShape&) { return std::make_unique<fedsc::Server>(o.server); });
  info.presets = {
      {"paper", "the paper's method as reconstructed from its prose (docs/algorithms.md#fedsc)", {}},
      {"reference",
       "what the released code computes: raw prototypes, CPDR inactive, self positive, pooled negatives, no U, "
       "last-epoch prototypes (train with training.lr = 0.1)",
       {{"merge", V{false}},
        {"cpdr", V{false}},
        {"normalize", V{false}},
        {"self_positive", V{true}},
        {"pooled_negatives", V{true}},
        {"knowledge_pass", V{std::string("last_epoch")}},
        {"keep_stale", V{false}}}}};
  info.check = neighbours_below_cohort;
  info.reads_features = true;
  return info;
}

}  // namespace drift
