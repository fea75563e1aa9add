// MOON (Li et al. 2021; docs/algorithms.md#moon): CE + mu * model-contrastive loss between the
// representation of the local model (z), the frozen received global model (positive) and the
// client's own model after its previous participation (negative).
//  - Representation: the projection-head output (Linear(d,d), ReLU, Linear(d,P), P = 256) on
//    which the classifier acts, as in the MOON code; projection_dim = 0 is PFLlib's variant
//    (backbone features, no head).
//  - Round 1: the buffer is empty, so the term is 0 for everyone (MOON code). Later, a client
//    that was never selected contrasts against the initial model.
//  - The previous model lives in the client's private state ("moon.previous/<tensor>"): one
//    model copy per client that has trained, the cost MOON has by design.
//  - The frozen copies run in eval mode without gradients (BatchNorm uses running statistics).
#include "engine/algorithms/moon.hpp"

#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/contrastive.hpp"
#include "engine/algorithms/param_table.hpp"

namespace drift {
namespace {

const std::string kPrevious = "moon.previous/";

void freeze(Model& model) {
  for (auto& p : model.parameters()) p.set_requires_grad(false);
  model.eval();
}

}  // namespace

torch::Tensor moon_contrastive(const torch::Tensor& z, const torch::Tensor& z_global, const torch::Tensor& z_previous,
                               double tau) {
  namespace F = torch::nn::functional;
  const auto unit = [](const torch::Tensor& t) { return F::normalize(t, F::NormalizeFuncOptions().dim(1).eps(1e-12)); };
  const auto u = unit(z);
  const auto similarities = torch::stack({(u * unit(z_global)).sum(1), (u * unit(z_previous)).sum(1)}, 1);
  auto positive = torch::zeros_like(similarities, torch::kBool);
  positive.select(1, 0).fill_(true);
  return multi_positive_info_nce(similarities, positive, tau);
}

void MoonClient::begin(ClientContext& ctx) {
  if (!global_) {
    global_ = make_model(ctx.model.recipe());
    previous_ = make_model(ctx.model.recipe());
    initial_ = state_of(*previous_);
    global_->to(ctx.device);
    previous_->to(ctx.device);
    freeze(*global_);
    freeze(*previous_);
  }
  contrast_ = ctx.task.round > 1 && mu_ > 0.0;
  if (!contrast_) return;
  load_state(*global_, ctx.task.weights);
  NamedTensors previous = initial_;
  if (ctx.state.tensors.count(kPrevious + previous.front().name) != 0)
    for (auto& t : previous) t.value = ctx.state.tensors.at(kPrevious + t.name);
  load_state(*previous_, previous);
}

torch::Tensor MoonClient::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) {
  auto ce = ClientAlgorithm::loss(labels, out, ctx);
  if (!contrast_) return ce;
  torch::Tensor z_global, z_previous;
  {
    torch::NoGradGuard no_grad;
    z_global = global_->forward(*ctx.inputs).features;
    z_previous = previous_->forward(*ctx.inputs).features;
  }
  return ce + mu_ * moon_contrastive(out.features, z_global, z_previous, tau_).mean();
}

void MoonClient::end(ClientContext& ctx, ClientUpdate& update) {
  for (const auto& t : update.weights) ctx.state.tensors[kPrevious + t.name] = t.value;
}

namespace {

struct MoonOptions {
  double mu = 1.0;  // paper: 5 on CIFAR-10, 1 on CIFAR-100
  double tau = 0.5;
  std::int64_t projection_dim = 256;  // 0: no head (PFLlib)
};

}  // namespace

AlgorithmInfo moon_info() {
  using O = MoonOptions;
  const ParamTable<O> params{{
      bind_key<O>("mu", "weight of the model-contrastive term (paper: 5 on CIFAR-10, 1 on CIFAR-100)", &O::mu)
          .range(0.0, std::nullopt),
      bind_key<O>("tau", "temperature", &O::tau).range(0.0, std::nullopt, true),
      bind_key<O>("projection_dim", "projection head output width; 0 = no head (PFLlib variant)", &O::projection_dim)
          .range(0.0, 65536.0),
  }};
  auto info = algorithm_info(
      "moon", "MOON: model-contrastive learning against the global model (positive) and the client's previous model",
      params, [](const O& o) { return std::make_unique<MoonClient>(o.mu, o.tau); },
      [](const O&, const FederationShape&) { return make_fedavg_server(); });
  info.reads_features = true;
  info.model_options = params.reading([](const O& o) {
    ModelOptions m;
    m.projection_dim = o.projection_dim;
    return m;
  });
  return info;
}

}  // namespace drift
