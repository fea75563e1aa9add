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

torch::Tensor lcl_loss(const torch::Tensor& logits, const torch::Tensor& labels, const torch::Tensor& knowledge,
                       const std::vector<std::int64_t>& classes, const torch::Tensor& u, const ClientOptions& o) {
  const auto batch = logits.size(0);
  auto s = cosine_matrix(logits, knowledge);
  if (u.defined()) s = s / u.unsqueeze(0);
  s = s / o.tau;
  // Column of each sample's class in `knowledge`, -1 when the class has none.
  std::vector<std::int64_t> column_of(static_cast<std::size_t>(logits.size(1)), -1);
  for (std::size_t j = 0; j < classes.size(); ++j)
    column_of[static_cast<std::size_t>(classes[j])] = static_cast<std::int64_t>(j);
  auto column = torch::tensor(column_of).to(labels.device()).index_select(0, labels);
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

void Client::begin(ClientContext& ctx) {
  classes_.clear();
  knowledge_ = u_ = torch::Tensor();
  means_.clear();
  auto it = ctx.task.payload.class_vectors.find("knowledge");
  if (!o_.lcl || it == ctx.task.payload.class_vectors.end() || it->second.empty()) return;
  std::vector<torch::Tensor> rows;
  for (const auto& [c, row] : it->second) {
    classes_.push_back(c);
    rows.push_back(row.reshape({-1}).to(torch::kFloat32));
  }
  knowledge_ = torch::stack(rows);
  if (o_.normalization == Normalization::dataset) {
    // U_j = (1/N_k) sum_i ||l_i - c~^j|| with the received model, once per round.
    auto sum = torch::zeros({knowledge_.size(0)}, torch::TensorOptions().dtype(torch::kFloat64).device(ctx.device));
    std::int64_t n = 0;
    for_each_local_batch(ctx, [&](const ModelOutput& out, const torch::Tensor&) {
      sum += torch::cdist(out.logits, knowledge_).to(torch::kFloat64).sum(0);
      n += out.logits.size(0);
    });
    u_ = (sum / static_cast<double>(std::max<std::int64_t>(n, 1))).clamp_min(1e-6).to(torch::kFloat32);
  }
}

torch::Tensor Client::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) {
  if (o_.knowledge_pass == KnowledgePass::last_epoch && in_last_local_epoch(ctx)) means_.add(out.logits, labels);
  auto total = ClientAlgorithm::loss(labels, out, ctx);
  if (!knowledge_.defined()) return total;
  double weight = o_.weight;
  if (o_.warmup_rounds > 0.0) weight *= std::min(static_cast<double>(ctx.task.round) / o_.warmup_rounds, 1.0);
  torch::Tensor u = u_;
  if (o_.normalization == Normalization::batch)
    u = torch::cdist(out.logits.detach(), knowledge_).mean(0).clamp_min(1e-6);
  return total + weight * lcl_loss(out.logits, labels, knowledge_, classes_, u, o_);
}

void Client::end(ClientContext& ctx, ClientUpdate& update) {
  if (o_.knowledge_pass == KnowledgePass::after) {
    means_.clear();
    for_each_local_batch(ctx,
                         [&](const ModelOutput& out, const torch::Tensor& labels) { means_.add(out.logits, labels); });
  }
  if (means_.empty()) return;
  auto& upload = update.payload.class_vectors["knowledge"];
  for (auto& [c, mean] : means_.means()) upload[c] = o_.silu ? mean * torch::sigmoid(mean) : mean;
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
    last_weights_ = gda_weights(discrepancy, samples, o_.gda_raw_counts);
  }
  global = weighted_average(global, updates, last_weights_);

  // GPR: skipped in the first round, and whenever the previous variance sum is 0.
  last_rho_ = last_applied_rho_ = std::numeric_limits<double>::quiet_NaN();
  if (o_.gpr && has_previous_) {
    std::set<std::uint32_t> now, before;
    for (const auto& [c, _] : fresh) now.insert(c);
    for (const auto& [c, _] : previous_) before.insert(c);
    if (o_.gpr_common_classes) {
      std::set<std::uint32_t> common;
      std::set_intersection(now.begin(), now.end(), before.begin(), before.end(), std::inserter(common, common.end()));
      now = before = common;
    }
    const double v_now = knowledge_variance(fresh, now, o_.gpr_unbiased);
    const double v_before = knowledge_variance(previous_, before, o_.gpr_unbiased);
    if (v_before > 0.0) {
      last_rho_ = (v_now - v_before) / v_before;
      // When the previous knowledge was nearly flat (early rounds: near-uniform logits), rho is
      // in the thousands and the literal step (1 - beta) rho (w_prev - w) throws the weights
      // far past both models: the divergence of docs/algorithms.md#fedskc. The limit bounds it.
      last_applied_rho_ =
          o_.gpr_rho_limit > 0.0 ? std::clamp(last_rho_, -o_.gpr_rho_limit, o_.gpr_rho_limit) : last_rho_;
      apply_gpr(global, previous_model, last_applied_rho_, o_.beta, o_.gpr_convex, o_.gpr_buffers);
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
  AlgorithmInfo info{
      "fedskc",
      "FedSKC: local contrastive learning on shared class knowledge (mean logits), global discrepancy "
      "aggregation, global period review",
      {bool_param("lcl", true, "module: local contrastive learning against the global knowledge"),
       bool_param("gda", true, "module: global discrepancy aggregation (off: FedAvg weights)"),
       bool_param("gpr", true, "module: global period review"),
       number_param("tau", 0.08, "LCL temperature", 0.0, std::nullopt, true),
       number_param("lcl_weight", 1.0, "weight of the LCL term", 0.0),
       number_param("warmup_rounds", 0.0, "LCL weight min(round / warmup_rounds, 1); 0 = full weight", 0.0),
       choice_param("normalization", "batch", {"none", "batch", "dataset"},
                    "U of Eq. 2: none, per batch, or over the local data at round start"),
       bool_param("positive_twice", false, "count the positive again among the C candidates (released code)"),
       bool_param("self_positive", false,
                  "a class without knowledge uses the sample itself as positive (released code)"),
       bool_param("silu", true, "upload c * sigmoid(c) instead of the plain mean logits"),
       choice_param("knowledge_pass", "after", {"after", "last_epoch"},
                    "mean logits from an eval pass after training, or collected during the last epoch"),
       integer_param("M", 1, "neighbours merged into each client's class knowledge (< cohort)", 1.0),
       choice_param("gda_count", "raw", {"raw", "fraction"},
                    "Eq. 4's N_k term: raw counts (saturates: uniform weights) or left out"),
       number_param("beta", 0.95, "GPR retention", 0.0, 1.0),
       choice_param("gpr_mode", "literal", {"literal", "convex"},
                    "literal: beta w + (1-beta) rho (w_prev - w); convex: w + (1-beta) rho (w_prev - w)"),
       number_param("gpr_rho_limit", 1.0, "GPR applies rho clamped to [-limit, limit]; 0 = unbounded (paper, code)",
                    0.0),
       choice_param("gpr_variance", "population", {"population", "unbiased"}, "variance of the C knowledge entries"),
       choice_param("gpr_scope", "parameters", {"parameters", "state"},
                    "GPR on parameters, or BatchNorm statistics too"),
       choice_param("gpr_classes", "common", {"common", "own"},
                    "variance sums over classes fresh in both rounds, or each round's own"),
       bool_param("keep_stale", true, "a class nobody held this round keeps its previous knowledge")},
      [](const ParamSet& p) {
        fedskc::ClientOptions o;
        o.lcl = p.boolean("lcl");
        o.tau = p.number("tau");
        o.weight = p.number("lcl_weight");
        o.warmup_rounds = p.number("warmup_rounds");
        o.normalization = fedskc::normalization_from(p.string("normalization"));
        o.positive_twice = p.boolean("positive_twice");
        o.self_positive = p.boolean("self_positive");
        o.silu = p.boolean("silu");
        o.knowledge_pass = knowledge_pass_from(p.string("knowledge_pass"));
        return std::make_unique<fedskc::Client>(o);
      },
      [](const ParamSet& p, const FederationShape&) {
        fedskc::ServerOptions o;
        o.neighbours = p.integer("M");
        o.gda = p.boolean("gda");
        o.gda_raw_counts = p.string("gda_count") == "raw";
        o.gpr = p.boolean("gpr");
        o.beta = p.number("beta");
        o.gpr_convex = p.string("gpr_mode") == "convex";
        o.gpr_rho_limit = p.number("gpr_rho_limit");
        o.gpr_unbiased = p.string("gpr_variance") == "unbiased";
        o.gpr_buffers = p.string("gpr_scope") == "state";
        o.gpr_common_classes = p.string("gpr_classes") == "common";
        o.keep_stale = p.boolean("keep_stale");
        return std::make_unique<fedskc::Server>(o);
      }};
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
