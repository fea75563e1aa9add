// FedRCL (Seo et al. 2024; docs/algorithms.md#fedrcl): CE + the mean over the model's feature levels
// (globally pooled output of every stage) of a supervised contrastive term and a relaxation
// penalty, on the local model's features only; the server is FedAvg.
// With s_ij = cos(f_i, f_j), per anchor i of a batch:
//  - SCL: the hardest positive p (the least similar other sample of the same class) against
//    the `negatives` hardest negatives n (the most similar samples of other classes):
//    -log( e^{s_ip/tau} / (e^{s_ip/tau} + sum_n e^{s_in/tau}) ); anchors without a same-class
//    partner are skipped, and missing negatives simply leave the sum.
//  - Penalty: the anchor itself is the positive (s_ii) and the least similar same-class
//    sample the negative, but only when its similarity is >= threshold; otherwise the
//    negative is the code's -1 placeholder: -log( e^{s_ii/tau} / (e^{s_ii/tau} + e^{s'/tau}) ).
#include "engine/algorithms/fedrcl.hpp"

#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/contrastive.hpp"
#include "engine/algorithms/param_table.hpp"

namespace drift {

torch::Tensor fedrcl_level_loss(const torch::Tensor& features, const torch::Tensor& labels, const FedRCLOptions& o) {
  const auto n = features.size(0);
  const auto s = cosine_matrix(features, features);
  const auto eye = torch::eye(n, torch::TensorOptions().dtype(torch::kBool).device(features.device()));
  const auto same = labels.unsqueeze(0).eq(labels.unsqueeze(1)).logical_and(eye.logical_not());
  const auto other = labels.unsqueeze(0).ne(labels.unsqueeze(1));
  const auto has_partner = same.any(1);

  // Hardest positive; rows without a partner pick an arbitrary column that is masked out below.
  const auto positive = std::get<0>(s.masked_fill(same.logical_not(), 2.0).min(1));
  const auto k = std::min<std::int64_t>(o.negatives, std::max<std::int64_t>(n - 1, 1));
  const auto hardest = std::get<0>(s.masked_fill(other.logical_not(), -1e30).topk(k, 1));
  // Positive first; a missing negative is -1e30, which log-sum-exp turns into nothing.
  const auto scl_logits = torch::cat({positive.unsqueeze(1), hardest}, 1) / o.tau;
  const auto scl_terms = torch::logsumexp(scl_logits, 1) - scl_logits.select(1, 0);
  const auto partners = has_partner.sum().item<std::int64_t>();
  auto scl = partners > 0 ? scl_terms.masked_select(has_partner).sum() / static_cast<double>(partners)
                          : torch::zeros({}, features.options());

  const auto close = has_partner.logical_and(positive.ge(o.threshold));
  const auto negative = torch::where(close, positive, torch::full_like(positive, -1.0));
  const auto penalty_logits = torch::stack({s.diagonal(), negative}, 1) / o.tau;
  const auto penalty = (torch::logsumexp(penalty_logits, 1) - penalty_logits.select(1, 0)).mean();
  return o.scl_weight * scl + o.penalty_weight * penalty;
}

torch::Tensor FedRCLClient::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) {
  auto total = ClientAlgorithm::loss(labels, out, ctx);
  if (out.levels.empty() || labels.size(0) < 2) return total;
  auto contrastive = torch::zeros({}, out.logits.options());
  for (const auto& level : out.levels) contrastive = contrastive + fedrcl_level_loss(level, labels, o_);
  return total + contrastive / static_cast<double>(out.levels.size());
}

AlgorithmInfo fedrcl_info() {
  using O = FedRCLOptions;
  const ParamTable<O> params{{
      bind_key<O>("tau", "temperature", &O::tau).range(0.0, std::nullopt, true),
      bind_key<O>("threshold", "same-class similarity from which the relaxation penalty pushes apart", &O::threshold)
          .range(-1.0, 1.0),
      bind_key<O>("negatives", "hardest other-class samples per anchor", &O::negatives).range(1.0, 1024.0),
      bind_key<O>("scl_weight", "weight of the supervised contrastive term", &O::scl_weight).range(0.0, std::nullopt),
      bind_key<O>("penalty_weight", "weight of the relaxation penalty", &O::penalty_weight).range(0.0, std::nullopt),
  }};
  auto info = algorithm_info(
      "fedrcl", "FedRCL: supervised contrastive learning with relaxation on every feature level of the local model",
      params, [](const O& o) { return std::make_unique<FedRCLClient>(o); },
      [](const O&, const FederationShape&) { return make_fedavg_server(); });
  info.reads_features = true;
  info.model_options = [](const ParamSet&) {
    ModelOptions o;
    o.feature_levels = true;
    return o;
  };
  return info;
}

}  // namespace drift
