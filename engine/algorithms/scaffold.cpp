// SCAFFOLD, option II (Karimireddy et al. 2020), docs/algorithms.md#scaffold.
//  - Server state c, broadcast in the payload as "c:<parameter>"; absent means zero.
//  - Client state c_i, kept in the client's private state as "c_i:<parameter>".
//  - Local step, as the reference baselines take it: the optimiser's step on grad f(y) (with its
//    clipping, weight decay and momentum), then y <- y - lr (c - c_i), outside the optimiser, so
//    that the correction never enters the momentum buffer (where it would be amplified by about
//    1 / (1 - momentum) each round, and the loop diverges). Without momentum or clipping both
//    moves are one step, y <- y - lr (grad + weight decay + c - c_i): the correction is then the
//    loss term sum((c - c_i) * (y - y.detach())), whose gradient is c - c_i and whose value is
//    zero (the reported training loss stays the plain loss), as before momentum was handled.
//  - After T local steps: c_i+ = c_i - c + (x - y) / (T lr); upload delta_c = c_i+ - c_i as
//    "c_delta:<parameter>".
//  - Server: x <- x + (eta_g / |S|) sum (y_k - x); c <- c + (1 / K) sum delta_c_k, K = all clients.
#include "engine/algorithms/scaffold.hpp"
#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/param_helpers.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {
namespace {

torch::Tensor named_or_zeros(const std::map<std::string, torch::Tensor>& tensors, const std::string& key,
                             const torch::Tensor& like) {
  auto it = tensors.find(key);
  return it == tensors.end() ? torch::zeros_like(like) : it->second.to(like.scalar_type()).reshape(like.sizes());
}

struct ScaffoldOptions {
  double server_lr = 1.0;  // eta_g
};

}  // namespace

void ScaffoldClient::begin(ClientContext& ctx) {
  params_.clear();
  const auto& hyper = ctx.task.hyper;
  after_optimiser_ = hyper.momentum != 0.0 || hyper.grad_clip > 0.0;
  learning_rate_ = hyper.learning_rate;
  for (const auto& p : ctx.model.named_parameters(true)) {
    const auto& value = p.value();
    auto c = named_or_zeros(ctx.task.payload.tensors, "c:" + p.key(), value);
    auto c_i = named_or_zeros(ctx.state.tensors, "c_i:" + p.key(), value);
    params_.push_back({p.key(), value, c.clone(), c_i.clone(), (c - c_i).detach()});
  }
}

torch::Tensor ScaffoldClient::loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) {
  auto total = ClientAlgorithm::loss(labels, out, ctx);
  if (after_optimiser_) return total;
  for (const auto& p : params_) total = total + (p.correction * (p.value - p.value.detach())).sum();
  return total;
}

void ScaffoldClient::after_step(ClientContext&) {
  if (!after_optimiser_) return;
  for (auto& p : params_) p.value.add_(p.correction, -learning_rate_);
}

void ScaffoldClient::end(ClientContext& ctx, ClientUpdate& update) {
  torch::NoGradGuard no_grad;
  const double steps_lr = static_cast<double>(update.metrics.steps) * ctx.task.hyper.learning_rate;
  for (const auto& p : params_) {
    torch::Tensor x;
    for (const auto& w : ctx.task.weights)
      if (w.name == p.name) x = w.value;
    if (!x.defined() || steps_lr <= 0.0) continue;
    auto c_i_new = p.c_i - p.c + (x.to(p.value.scalar_type()) - p.value.detach()) / steps_lr;
    update.payload.tensors["c_delta:" + p.name] = c_i_new - p.c_i;
    ctx.state.tensors["c_i:" + p.name] = c_i_new;
  }
}

void ScaffoldServer::aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                               const AggregationInput&) {
  const auto average = weighted_average(global, updates, update_weights(UpdateWeighting::uniform, updates));
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < global.size(); ++i) {
    auto& x = global[i].value;
    if (!x.is_floating_point()) {
      x = average[i].value;
      continue;
    }
    x = (x.to(torch::kFloat64) + eta_ * (average[i].value.to(torch::kFloat64) - x.to(torch::kFloat64)))
            .to(x.scalar_type());
  }
  for (const auto& u : updates) {
    for (const auto& [key, delta] : u.payload.tensors) {
      if (key.rfind("c_delta:", 0) != 0) continue;
      const auto name = key.substr(8);
      auto& c = c_[name];
      if (!c.defined()) c = torch::zeros(delta.sizes(), torch::kFloat64);
      c.add_(delta.to(torch::kFloat64), 1.0 / static_cast<double>(num_clients_));
    }
  }
}

Payload ScaffoldServer::broadcast(std::uint32_t) {
  Payload p;
  for (const auto& [name, c] : c_) p.tensors["c:" + name] = c.to(torch::kFloat32);
  return p;
}

AlgorithmInfo scaffold_info() {
  using O = ScaffoldOptions;
  const ParamTable<O> params{
      {bind_key<O>("server_lr", "server learning rate eta_g", &O::server_lr).range(0.0, std::nullopt, true)}};
  return algorithm_info(
      "scaffold", "SCAFFOLD (option II): control variates correct client drift; 2x model traffic", params,
      [](const O&) { return std::make_unique<ScaffoldClient>(); },
      [](const O& o, const FederationShape& shape) {
        return std::make_unique<ScaffoldServer>(o.server_lr, std::max<std::uint32_t>(1, shape.num_clients));
      });
}

void ScaffoldServer::archive(StateArchive& ar) { archive_tensor_map(ar, c_); }

}  // namespace drift
