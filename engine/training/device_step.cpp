#include "engine/training/device_step.hpp"

#include "engine/algorithms/fedprox.hpp"

namespace drift {

StepState::StepState(Model& model, const torch::Device& device) : model_(model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) {
    if (!p.requires_grad()) continue;
    // Gradients that exist before the first backward pass are accumulated into in place, so
    // they keep their addresses from step to step and job to job.
    p.mutable_grad() = torch::zeros_like(p);
    params_.push_back(p);
    momenta_.push_back(torch::zeros_like(p));
    anchors_.push_back(torch::zeros_like(p));
  }
  const auto on = torch::TensorOptions().device(device);
  neg_lr_ = torch::zeros({}, on.dtype(torch::kFloat32));
  loss_sum_ = torch::zeros({}, on.dtype(torch::kFloat64));
  correct_ = torch::zeros({}, on.dtype(torch::kInt64));
  first_bad_ = torch::zeros({}, on.dtype(torch::kInt64));
  bad_value_ = torch::zeros({}, on.dtype(torch::kFloat64));
  step_ = torch::zeros({}, on.dtype(torch::kInt64));
}

void StepState::begin_job(double learning_rate, bool anchor, std::vector<torch::Tensor> extra) {
  torch::NoGradGuard no_grad;
  if (!momenta_.empty()) torch::_foreach_zero_(momenta_);  // foreach ops refuse an empty list
  if (anchor)
    for (std::size_t i = 0; i < params_.size(); ++i) anchors_[i].copy_(params_[i]);
  neg_lr_.fill_(-learning_rate);
  loss_sum_.zero_();
  correct_.zero_();
  first_bad_.fill_(-1);
  bad_value_.zero_();
  step_.zero_();
  extra_ = std::move(extra);
  extra_momenta_.clear();
  for (const auto& t : extra_) extra_momenta_.push_back(torch::zeros_like(t));
}

torch::Tensor StepState::objective_loss(const torch::Tensor& labels, const ModelOutput& out, double mu,
                                        const torch::Tensor& weights) const {
  namespace F = torch::nn::functional;
  // A padded batch's padding rows weigh 0: their gradient is exactly 0, and the mean is over
  // the samples.
  auto ce = weights.defined()
                ? (F::cross_entropy(out.logits, labels, F::CrossEntropyFuncOptions().reduction(torch::kNone)) * weights)
                          .sum() /
                      weights.sum()
                : F::cross_entropy(out.logits, labels);
  return mu > 0.0 ? ce + proximal_term(params_, anchors_, mu) : ce;
}

void StepState::zero_grads() {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params_) grads.push_back(p.grad());
  for (const auto& t : extra_)
    if (t.grad().defined()) grads.push_back(t.grad());
  if (!grads.empty()) torch::_foreach_zero_(grads);
}

void StepState::step(const torch::Tensor& x, const torch::Tensor& y, const StepLoss& loss_of,
                     const StepSettings& settings, const torch::Tensor& weights) {
  zero_grads();
  auto out = model_.forward(x);
  auto loss = loss_of(y, out, weights);
  loss.backward();
  torch::NoGradGuard no_grad;
  apply_sgd(settings);
  record(loss, out.logits, y, settings.batch, weights);
}

// torch::optim::SGD's order after clip_grad_norm_'s clipping; a zero momentum buffer times the
// momentum plus d is d, which is torch's first step (it copies d). The learning rate is a device
// tensor so that a captured step serves every round of a decaying schedule.
void StepState::apply_sgd(const StepSettings& s) {
  std::vector<torch::Tensor> params = params_, momenta = momenta_;
  for (std::size_t i = 0; i < extra_.size(); ++i) {
    if (!extra_[i].grad().defined()) continue;
    params.push_back(extra_[i]);
    momenta.push_back(extra_momenta_[i]);
  }
  std::vector<torch::Tensor> d;
  for (const auto& p : params) d.push_back(p.grad());
  if (s.grad_clip > 0) {
    std::vector<torch::Tensor> norms;
    for (const auto& g : d) norms.push_back(g.norm(2));
    const auto total = norms.size() == 1 ? norms.front() : torch::stack(norms).norm(2);
    const auto coef = torch::clamp(s.grad_clip / (total + 1e-6), c10::nullopt, 1.0);
    for (auto& g : d) g.mul_(coef);
  }
  if (s.weight_decay != 0)
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = d[i].add(params[i], s.weight_decay);
  if (s.momentum != 0 && !momenta.empty()) {
    torch::_foreach_mul_(momenta, s.momentum);
    torch::_foreach_add_(momenta, d);
    d = momenta;
  }
  for (std::size_t i = 0; i < params.size(); ++i) params[i].addcmul_(d[i], neg_lr_);
}

void StepState::record(const torch::Tensor& loss, const torch::Tensor& logits, const torch::Tensor& y,
                       std::int64_t batch, const torch::Tensor& weights) {
  const auto value = loss.detach().to(torch::kFloat64);
  if (weights.defined()) {
    // The samples' count is exact in float32 (far below 2^24).
    loss_sum_.add_(value * weights.sum().to(torch::kFloat64));
    correct_.add_(logits.argmax(1).eq(y).logical_and(weights.gt(0)).sum());
  } else {
    loss_sum_.add_(value * static_cast<double>(batch));
    correct_.add_(logits.argmax(1).eq(y).sum());
  }
  const auto bad = torch::logical_and(first_bad_.lt(0), torch::logical_not(torch::isfinite(value)));
  first_bad_.copy_(torch::where(bad, step_, first_bad_));
  bad_value_.copy_(torch::where(bad, value, bad_value_));
  step_.add_(1);
}

StepTotals StepState::totals_of(const std::vector<torch::Tensor>& host) {
  StepTotals t;
  t.loss = host.at(0).item<double>();
  t.correct = host.at(1).item<std::int64_t>();
  t.first_bad = host.at(2).item<std::int64_t>();
  t.bad_value = host.at(3).item<double>();
  return t;
}

}  // namespace drift
