// FedSKC (docs/algorithms.md#fedskc). Two presets: `paper` (the formulas as written, with
// drift's decisions where the paper is silent) and `reference` (what the authors' released
// code computes). Every module and each discrepancy is a parameter of its own.
#include "engine/algorithms/fedskc.hpp"
#include "engine/tensors/tensor_archive.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/contrastive.hpp"
#include "engine/algorithms/param_helpers.hpp"
#include "engine/algorithms/param_table.hpp"

namespace drift::fedskc {

torch::Tensor merge_class_knowledge(const torch::Tensor& rows, std::int64_t neighbours) {
  const auto x = rows.to(torch::kFloat64);
  const auto n = x.size(0);
  const auto distances = torch::cdist(x, x).contiguous();
  const auto* d = distances.data_ptr<double>();
  const auto m = std::min<std::int64_t>(neighbours, n - 1);
  auto total = torch::zeros({x.size(1)}, torch::kFloat64);
  for (std::int64_t k = 0; k < n; ++k) {
    std::vector<std::int64_t> others;
    for (std::int64_t j = 0; j < n; ++j)
      if (j != k) others.push_back(j);
    std::stable_sort(others.begin(), others.end(),
                     [&](std::int64_t a, std::int64_t b) { return d[k * n + a] < d[k * n + b]; });
    auto smoothed = x[k].clone();
    for (std::int64_t i = 0; i < m; ++i) smoothed += x[others[static_cast<std::size_t>(i)]];
    total += smoothed / static_cast<double>(m + 1);
  }
  return total / static_cast<double>(n);
}

std::vector<double> gda_weights(const std::vector<double>& discrepancy, const std::vector<double>& samples,
                                bool raw_counts) {
  const double d_sum = std::accumulate(discrepancy.begin(), discrepancy.end(), 0.0);
  const double n_sum = std::accumulate(samples.begin(), samples.end(), 0.0);
  std::vector<double> e(discrepancy.size());
  double total = 0.0;
  for (std::size_t k = 0; k < e.size(); ++k) {
    const double a = d_sum > 0.0 ? discrepancy[k] / d_sum : 0.0;
    const double b = n_sum > 0.0 ? samples[k] / n_sum : 0.0;
    const double x = (raw_counts ? samples[k] : 0.0) - a * discrepancy[k] + b;
    e[k] = 1.0 / (1.0 + std::exp(-x));
    total += e[k];
  }
  for (auto& v : e) v /= total;
  return e;
}

double knowledge_variance(const Knowledge& knowledge, const std::set<std::uint32_t>& classes, bool unbiased) {
  double total = 0.0;
  for (auto c : classes) total += knowledge.at(c).var(unbiased).item<double>();
  return total;
}

namespace {

// BatchNorm's statistics are the only buffers our models register; torch's names tell them
// apart from parameters inside a flat NamedTensors.
bool is_buffer_name(const std::string& name) {
  for (const std::string suffix : {"running_mean", "running_var", "num_batches_tracked"})
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), std::string::npos, suffix) == 0)
      return true;
  return false;
}

}  // namespace

void apply_gpr(NamedTensors& current, const NamedTensors& previous, double rho, double beta, bool convex,
               bool include_buffers) {
  torch::NoGradGuard no_grad;
  const double keep = convex ? 1.0 : beta;
  for (std::size_t i = 0; i < current.size(); ++i) {
    auto& w = current[i].value;
    if (!w.is_floating_point() || (!include_buffers && is_buffer_name(current[i].name))) continue;
    const auto w64 = w.to(torch::kFloat64);
    w = (keep * w64 + (1.0 - beta) * rho * (previous[i].value.to(torch::kFloat64) - w64)).to(w.scalar_type());
  }
}

torch::Tensor knowledge_columns(const std::vector<std::int64_t>& classes, std::int64_t num_classes,
                                const torch::Device& device) {
  std::vector<std::int64_t> column_of(static_cast<std::size_t>(num_classes), -1);
  // at(): a class beyond the model's (a peer's bad payload) fails the job, not the process.
  for (std::size_t j = 0; j < classes.size(); ++j)
    column_of.at(static_cast<std::size_t>(classes[j])) = static_cast<std::int64_t>(j);
  return torch::tensor(column_of).to(device);
}

torch::Tensor lcl_loss(const torch::Tensor& logits, const torch::Tensor& labels, const torch::Tensor& knowledge,
                       const std::vector<std::int64_t>& classes, const torch::Tensor& u, const ClientOptions& o) {
  return lcl_loss(logits, labels, knowledge, knowledge_columns(classes, logits.size(1), labels.device()), u, o);
}

torch::Tensor lcl_loss(const torch::Tensor& logits, const torch::Tensor& labels, const torch::Tensor& knowledge,
                       const torch::Tensor& column_of, const torch::Tensor& u, const ClientOptions& o) {
  const auto batch = logits.size(0);
  auto s = cosine_matrix(logits, knowledge);
  if (u.defined()) s = s / u.unsqueeze(0);
  s = s / o.tau;
  // Column of each sample's class in `knowledge`, -1 when the class has none.
  auto column = column_of.index_select(0, labels);
  const auto present = column.ge(0);
  // A sample without a positive either sits out (paper) or uses itself, cos = 1 (code).
  const auto self = torch::full({batch}, 1.0 / o.tau, s.options());
  const auto positive = torch::where(present, s.gather(1, column.clamp_min(0).unsqueeze(1)).squeeze(1), self);
  const auto log_candidates = torch::logsumexp(s, 1);
  const auto with_positive = torch::logaddexp(log_candidates, positive);
  const auto denominator = o.positive_twice ? with_positive : torch::where(present, log_candidates, with_positive);
  auto per_sample = denominator - positive;
  if (!o.self_positive) per_sample = torch::where(present, per_sample, torch::zeros_like(per_sample));
  return per_sample.sum() / static_cast<double>(batch);
}

// ---------------------------------------------------------------------------------------------
// Client

Client::KnowledgeSlot& Client::slot_for(std::int64_t rows, std::int64_t width, std::int64_t classes,
                                        const torch::Device& device) {
  auto& slot = slots_[rows];
  if (!slot.knowledge.defined() || slot.knowledge.device() != device || slot.knowledge.size(1) != width ||
      slot.columns.size(0) != classes) {
    const auto on = torch::TensorOptions().device(device);
    slot.knowledge = torch::zeros({rows, width}, on.dtype(torch::kFloat32));
    slot.u = torch::ones({rows}, on.dtype(torch::kFloat32));
    slot.columns = torch::full({classes}, -1, on.dtype(torch::kInt64));
  }
  return slot;
}

void Client::begin(ClientContext& ctx) {
  active_ = nullptr;
  means_.restart();
  auto it = ctx.task.payload.class_vectors.find("knowledge");
  if (!o_.lcl || it == ctx.task.payload.class_vectors.end() || it->second.empty()) return;
  std::vector<std::int64_t> classes;
  std::vector<torch::Tensor> rows;
  for (const auto& [c, row] : it->second) {
    classes.push_back(c);
    rows.push_back(row.reshape({-1}).to(torch::kFloat32));
  }
  const auto knowledge = torch::stack(rows);
  auto& slot = slot_for(knowledge.size(0), knowledge.size(1), ctx.data->num_classes, ctx.device);
  slot.knowledge.copy_(knowledge);
  slot.columns.copy_(knowledge_columns(classes, ctx.data->num_classes, torch::kCPU));
  double weight = o_.weight;
  if (o_.warmup_rounds > 0.0) weight *= std::min(static_cast<double>(ctx.task.round) / o_.warmup_rounds, 1.0);
  if (!weight_.defined() || weight_.device() != ctx.device)
    weight_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(ctx.device));
  weight_.fill_(weight);
  active_ = &slot;
  if (o_.normalization == Normalization::dataset) {
    // U_j = (1/N_k) sum_i ||l_i - c~^j|| with the received model, once per round.
    auto sum = torch::zeros({knowledge.size(0)}, torch::TensorOptions().dtype(torch::kFloat64).device(ctx.device));
    std::int64_t n = 0;
    for_each_local_batch(ctx, [&](const ModelOutput& out, const torch::Tensor&) {
      sum += torch::cdist(out.logits, slot.knowledge).to(torch::kFloat64).sum(0);
      n += out.logits.size(0);
    });
    slot.u.copy_((sum / static_cast<double>(std::max<std::int64_t>(n, 1))).clamp_min(1e-6));
  }
}

std::optional<std::string> Client::step_graph_key(const ClientContext& ctx) const {
  std::string key = "ce";
  if (active_)
    key = "lcl" + std::to_string(active_->knowledge.size(0)) + "x" + std::to_string(active_->knowledge.size(1));
  if (o_.knowledge_pass == KnowledgePass::last_epoch && in_last_local_epoch(ctx)) key += "+means";
  return key;
}

torch::Tensor Client::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) {
  if (o_.knowledge_pass == KnowledgePass::last_epoch && in_last_local_epoch(ctx))
    means_.add(out.logits, labels, ctx.data->num_classes);
  auto total = ClientAlgorithm::loss(labels, out, ctx);
  if (active_ == nullptr) return total;
  const auto& k = active_->knowledge;
  torch::Tensor u;
  if (o_.normalization == Normalization::dataset) u = active_->u;
  if (o_.normalization == Normalization::batch) u = torch::cdist(out.logits.detach(), k).mean(0).clamp_min(1e-6);
  return total + weight_ * lcl_loss(out.logits, labels, k, active_->columns, u, o_);
}

void Client::end(ClientContext& ctx, ClientUpdate& update) {
  if (o_.knowledge_pass == KnowledgePass::after) {
    means_.restart();
    for_each_local_batch(ctx, [&](const ModelOutput& out, const torch::Tensor& labels) {
      means_.add(out.logits, labels, ctx.data->num_classes);
    });
  }
  const auto means = means_.means();
  if (means.empty()) return;
  auto& upload = update.payload.class_vectors["knowledge"];
  for (const auto& [c, mean] : means) upload[c] = o_.silu ? mean * torch::sigmoid(mean) : mean;
}

// ---------------------------------------------------------------------------------------------
// Server

Payload Server::broadcast(std::uint32_t) {
  Payload p;
  for (const auto& [c, v] : knowledge_) p.class_vectors["knowledge"][c] = v.to(torch::kFloat32).unsqueeze(0);
  return p;
}

void Server::aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput&) {
  const NamedTensors previous_model = global;

  // Knowledge, per class over the participants that hold it.
  std::map<std::uint32_t, std::vector<torch::Tensor>> rows;
  for (const auto& u : updates) {
    auto it = u.payload.class_vectors.find("knowledge");
    if (it == u.payload.class_vectors.end()) continue;
    for (const auto& [c, row] : it->second) rows[c].push_back(row.reshape({-1}).to(torch::kFloat64));
  }
  Knowledge fresh;
  for (const auto& [c, list] : rows) fresh[c] = merge_class_knowledge(torch::stack(list), o_.neighbours);

  // Model: GDA weights, or FedAvg's.
  last_weights_ = sample_weights(updates);
  if (o_.gda) {
    std::vector<double> discrepancy, samples;
    for (const auto& u : updates) {
      double d = 0.0;
      if (auto it = u.payload.class_vectors.find("knowledge"); it != u.payload.class_vectors.end())
        for (const auto& [c, row] : it->second)
          d += (row.reshape({-1}).to(torch::kFloat64) - fresh.at(c)).norm().item<double>();
      discrepancy.push_back(d);
      samples.push_back(static_cast<double>(u.num_samples));
    }
    last_weights_ = gda_weights(discrepancy, samples, o_.gda_count == GdaCount::raw);
  }
  global = weighted_average(global, updates, last_weights_);

  // GPR: skipped in the first round, and whenever the previous variance sum is 0.
  last_rho_ = last_applied_rho_ = std::numeric_limits<double>::quiet_NaN();
  if (o_.gpr && has_previous_) {
    std::set<std::uint32_t> now, before;
    for (const auto& [c, _] : fresh) now.insert(c);
    for (const auto& [c, _] : previous_) before.insert(c);
    if (o_.gpr_classes == GprClasses::common) {
      std::set<std::uint32_t> common;
      std::set_intersection(now.begin(), now.end(), before.begin(), before.end(), std::inserter(common, common.end()));
      now = before = common;
    }
    const bool unbiased = o_.gpr_variance == GprVariance::unbiased;
    const double v_now = knowledge_variance(fresh, now, unbiased);
    const double v_before = knowledge_variance(previous_, before, unbiased);
    if (v_before > 0.0) {
      last_rho_ = (v_now - v_before) / v_before;
      // When the previous knowledge was nearly flat (early rounds: near-uniform logits), rho is
      // in the thousands and the literal step (1 - beta) rho (w_prev - w) throws the weights
      // far past both models: the divergence of docs/algorithms.md#fedskc. The limit bounds it.
      last_applied_rho_ =
          o_.gpr_rho_limit > 0.0 ? std::clamp(last_rho_, -o_.gpr_rho_limit, o_.gpr_rho_limit) : last_rho_;
      apply_gpr(global, previous_model, last_applied_rho_, o_.beta, o_.gpr_mode == GprMode::convex,
                o_.gpr_scope == GprScope::state);
    }
  }

  if (!o_.keep_stale) knowledge_.clear();
  for (const auto& [c, v] : fresh) knowledge_[c] = v;
  previous_ = std::move(fresh);
  has_previous_ = true;
}

AlgorithmMetrics Server::metrics() const {
  AlgorithmMetrics m;
  m.scalars["gpr_rho"] = last_rho_;
  m.scalars["gpr_rho_applied"] = last_applied_rho_;
  m.per_client[o_.gda ? "gda_weight" : "fedavg_weight"] = last_weights_;
  return m;
}

void Server::archive(StateArchive& ar) {
  archive_tensor_map(ar, knowledge_);
  archive_tensor_map(ar, previous_);
  ar.value(has_previous_);
}

}  // namespace drift::fedskc

namespace drift {

AlgorithmInfo fedskc_info() {
  using V = ParamValue;
  using fedskc::ClientOptions, fedskc::ServerOptions, fedskc::Options;
  constexpr auto client = &Options::client;
  constexpr auto server = &Options::server;
  // clang-format off
  const ParamTable<Options> params{{
      bind_key<Options>("lcl", "module: local contrastive learning against the global knowledge", client, &ClientOptions::lcl),
      bind_key<Options>("gda", "module: global discrepancy aggregation (off: FedAvg weights)", server, &ServerOptions::gda),
      bind_key<Options>("gpr", "module: global period review", server, &ServerOptions::gpr),
      bind_key<Options>("tau", "LCL temperature", client, &ClientOptions::tau).range(0.0, std::nullopt, true),
      bind_key<Options>("lcl_weight", "weight of the LCL term", client, &ClientOptions::weight).range(0.0, std::nullopt),
      bind_key<Options>("warmup_rounds", "LCL weight min(round / warmup_rounds, 1); 0 = full weight", client,
                        &ClientOptions::warmup_rounds).range(0.0, std::nullopt),
      bind_key<Options>("normalization", "U of Eq. 2: none, per batch, or over the local data at round start", client,
                        &ClientOptions::normalization),
      bind_key<Options>("positive_twice", "count the positive again among the C candidates (released code)", client,
                        &ClientOptions::positive_twice),
      bind_key<Options>("self_positive", "a class without knowledge uses the sample itself as positive (released code)",
                        client, &ClientOptions::self_positive),
      bind_key<Options>("silu", "upload c * sigmoid(c) instead of the plain mean logits", client, &ClientOptions::silu),
      bind_key<Options>("knowledge_pass",
                        "mean logits from an eval pass after training, or collected during the last epoch", client,
                        &ClientOptions::knowledge_pass),
      bind_key<Options>("M", "neighbours merged into each client's class knowledge (< cohort)", server,
                        &ServerOptions::neighbours).range(1.0, std::nullopt),
      bind_key<Options>("gda_count", "Eq. 4's N_k term: raw counts (saturates: uniform weights) or left out", server,
                        &ServerOptions::gda_count),
      bind_key<Options>("beta", "GPR retention", server, &ServerOptions::beta).range(0.0, 1.0),
      bind_key<Options>("gpr_mode",
                        "literal: beta w + (1-beta) rho (w_prev - w); convex: w + (1-beta) rho (w_prev - w)", server,
                        &ServerOptions::gpr_mode),
      bind_key<Options>("gpr_rho_limit", "GPR applies rho clamped to [-limit, limit]; 0 = unbounded (paper, code)",
                        server, &ServerOptions::gpr_rho_limit).range(0.0, std::nullopt),
      bind_key<Options>("gpr_variance", "variance of the C knowledge entries", server, &ServerOptions::gpr_variance),
      bind_key<Options>("gpr_scope", "GPR on parameters, or BatchNorm statistics too", server,
                        &ServerOptions::gpr_scope),
      bind_key<Options>("gpr_classes", "variance sums over classes fresh in both rounds, or each round's own", server,
                        &ServerOptions::gpr_classes),
      bind_key<Options>("keep_stale", "a class nobody held this round keeps its previous knowledge", server,
                        &ServerOptions::keep_stale),
  }};
  // clang-format on
  auto info = algorithm_info(
      "fedskc",
      "FedSKC: local contrastive learning on shared class knowledge (mean logits), global discrepancy "
      "aggregation, global period review",
      params, [](const Options& o) { return std::make_unique<fedskc::Client>(o.client); },
      [](const Options& o, const FederationShape&) { return std::make_unique<fedskc::Server>(o.server); });
  info.presets = {
      {"paper", "the formulas of the paper, with drift's choices where it is silent (docs/algorithms.md#fedskc)", {}},
      {"reference",
       "what the authors' released code computes: no SiLU, no U, positive counted twice, warm-up "
       "min(r/100, 1), GDA replaced by FedAvg, beta 0.99 (train with training.lr = 0.1)",
       {{"gda", V{false}},
        {"warmup_rounds", V{100.0}},
        {"normalization", V{std::string("none")}},
        {"positive_twice", V{true}},
        {"self_positive", V{true}},
        {"silu", V{false}},
        {"knowledge_pass", V{std::string("last_epoch")}},
        {"beta", V{0.99}},
        {"gpr_rho_limit", V{0.0}},
        {"gpr_variance", V{std::string("unbiased")}},
        {"gpr_scope", V{std::string("state")}},
        {"gpr_classes", V{std::string("own")}},
        {"keep_stale", V{false}}}},
  };
  info.check = neighbours_below_cohort;
  return info;
}

}  // namespace drift
