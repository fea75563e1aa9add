// FedNH (Dai et al. 2023; docs/algorithms.md#fednh).
//  - Model: cosine classifier, logits = s * W normalize(z) with unit rows W (the prototypes,
//    "head.weight", orthogonal at start) and a learnable scale s ("head.scale", 1 at start).
//  - Client: plain CE with W frozen; afterwards an eval pass over the local data uploads, per
//    class held, normalize(mean normalize(z)) ("fednh.prototypes") and the count ("fednh.counts").
//  - Server: w <- w + eta_g * mean_k (w_k - w) (unweighted, eta_g = 1 gives the plain mean);
//    mu_c = normalize( sum_k n_kc normalize(p_kc) / sum_k n_kc );
//    W_c <- normalize(rho W_c + (1 - rho) mu_c). A class nobody held keeps W_c.
#include "engine/algorithms/fednh.hpp"

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/param_helpers.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/core/error.hpp"

namespace drift {
namespace {

namespace F = torch::nn::functional;
const std::string kHead = "head.weight";

torch::Tensor unit_rows(const torch::Tensor& t) { return F::normalize(t, F::NormalizeFuncOptions().dim(1).eps(1e-12)); }

}  // namespace

void FedNHClient::begin(ClientContext& ctx) {
  for (auto& p : ctx.model.named_parameters(true)) p.value().set_requires_grad(p.key() != kHead);
}

void FedNHClient::end(ClientContext& ctx, ClientUpdate& update) {
  ClassMeans means;
  for_each_local_batch(
      ctx, [&](const ModelOutput& out, const torch::Tensor& labels) { means.add(unit_rows(out.features), labels); });
  for (const auto& [c, mean] : means.means()) update.payload.class_vectors["fednh.prototypes"][c] = unit_rows(mean);
  for (const auto& [c, n] : means.counts())
    update.payload.class_vectors["fednh.counts"][c] = torch::full({1, 1}, static_cast<float>(n));
}

void FedNHServer::aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput&) {
  auto mean = weighted_average(global, updates, update_weights(UpdateWeighting::uniform, updates));
  torch::Tensor* prototypes = nullptr;
  for (std::size_t i = 0; i < mean.size(); ++i) {
    if (server_lr_ != 1.0 && mean[i].value.is_floating_point())
      mean[i].value = global[i].value + server_lr_ * (mean[i].value - global[i].value);
    if (mean[i].name == kHead) prototypes = &mean[i].value;
  }
  if (prototypes == nullptr) throw std::logic_error("fednh needs a model with a cosine head ('head.weight')");

  std::map<std::uint32_t, std::pair<torch::Tensor, double>> sums;  // class -> (sum n p, sum n)
  for (const auto& u : updates) {
    auto protos = u.payload.class_vectors.find("fednh.prototypes");
    auto counts = u.payload.class_vectors.find("fednh.counts");
    if (protos == u.payload.class_vectors.end() || counts == u.payload.class_vectors.end()) continue;
    for (const auto& [c, row] : protos->second) {
      auto n_it = counts->second.find(c);
      if (n_it == counts->second.end() || c >= prototypes->size(0)) continue;
      const double n = n_it->second.item<double>();
      const auto p = unit_rows(row.to(torch::kFloat64).reshape({1, -1}));
      auto& [sum, total] = sums[c];
      sum = sum.defined() ? sum + n * p : n * p;
      total += n;
    }
  }
  torch::NoGradGuard no_grad;
  for (const auto& [c, entry] : sums) {
    if (entry.second <= 0.0) continue;
    const auto mu = unit_rows(entry.first / entry.second);
    const auto row = prototypes->select(0, c).to(torch::kFloat64).reshape({1, -1});
    prototypes->select(0, c).copy_(unit_rows(rho_ * row + (1.0 - rho_) * mu).reshape({-1}));
  }
  global = std::move(mean);
}

namespace {

struct FedNHOptions {
  double rho = 0.9;        // prototype retention
  double server_lr = 1.0;  // eta_g
};

}  // namespace

AlgorithmInfo fednh_info() {
  using O = FedNHOptions;
  const ParamTable<O> params{{
      bind_key<O>("rho", "prototype retention: W_c <- normalize(rho W_c + (1 - rho) mu_c)", &O::rho).range(0.0, 1.0),
      bind_key<O>("server_lr", "eta_g: w <- w + eta_g * mean(w_k - w)", &O::server_lr).range(0.0, std::nullopt, true),
  }};
  auto info = algorithm_info(
      "fednh",
      "FedNH: frozen cosine classifier of unit prototypes, updated by the server from count-weighted client prototypes",
      params, [](const O&) { return std::make_unique<FedNHClient>(); },
      [](const O& o, const FederationShape&) { return std::make_unique<FedNHServer>(o.rho, o.server_lr); });
  info.reads_features = true;
  info.model_options = [](const ParamSet&) {
    ModelOptions o;
    o.head = HeadKind::cosine;
    return o;
  };
  return info;
}

}  // namespace drift
