#include "engine/training/packed_model.hpp"

#include <algorithm>
#include <stdexcept>

#include "engine/models/cnn_models.hpp"
#include "engine/models/resnet.hpp"
#include "engine/training/device_transfer.hpp"

namespace drift {
namespace F = torch::nn::functional;
namespace {

PackedLayout layout_of(const std::string& model_name) {
  const auto* row = find_model(model_name);
  return row ? row->packs : PackedLayout::none;
}
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Index of `name` in `names`; the forward pass asks only for tensors the architecture has.
std::size_t index_of(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) throw std::invalid_argument("packed model has no tensor '" + name + "'");
  return static_cast<std::size_t>(it - names.begin());
}

// Rows `rows` of every tensor (all of them: the tensors themselves).
std::vector<torch::Tensor> gather(const std::vector<torch::Tensor>& all, const torch::Tensor& rows, bool whole) {
  if (whole) return all;
  std::vector<torch::Tensor> out;
  for (const auto& t : all) out.push_back(t.index_select(0, rows));
  return out;
}

void scatter(std::vector<torch::Tensor>& all, const std::vector<torch::Tensor>& part, const torch::Tensor& rows) {
  for (std::size_t i = 0; i < all.size(); ++i) all[i].index_copy_(0, rows, part[i].detach());
}

}  // namespace

std::string packing_refusal(const std::string& model_name, const ModelOptions& options) {
  if (layout_of(model_name) == PackedLayout::none)
    return "model '" + model_name + "' does not pack (the two-convolution CNNs and the ResNets do)";
  if (options.projection_dim > 0 || options.head != HeadKind::linear || options.feature_levels ||
      options.feature_dim > 0)
    return "the model has a projection, another head, pooled features or extra outputs, which do not pack";
  return "";
}

bool has_batch_statistics(const torch::nn::Module& model) {
  for (const auto& buffer : model.named_buffers())
    if (ends_with(buffer.key(), "running_mean")) return true;
  return false;
}

std::string packing_refusal(const Model& model) { return packing_refusal(model.recipe().name, model.recipe().options); }

PackedModel::PackedModel(const Model& prototype, const NamedTensors& start, std::int64_t clients,
                         const torch::Device& device)
    : clients_(clients) {
  if (const auto why = packing_refusal(prototype); !why.empty()) throw std::invalid_argument(why);
  // The row's layout names the packed forward pass; the module must be of its class (a
  // plugin's row cannot claim a layout its module does not have).
  const auto layout = layout_of(prototype.recipe().name);
  resnet_ = layout == PackedLayout::resnet;
  if (const auto* cnn = dynamic_cast<const TwoConvCnn*>(&prototype); cnn && layout == PackedLayout::two_conv)
    padding_ = cnn->padding();
  else if (!(resnet_ && dynamic_cast<const ResNet*>(&prototype)))
    throw std::invalid_argument("model '" + prototype.recipe().name + "' claims a packed layout its module lacks");
  layout_ = state_of(prototype);
  check_compatible(layout_, start);
  std::vector<std::string> names;
  for (const auto& t : layout_) names.push_back(t.name);
  torch::NoGradGuard no_grad;
  // The task's weights go to the device in one copy per dtype, and are broadcast to the rows there.
  const auto uploaded = upload_state(start, device);
  for (const auto& p : prototype.named_parameters()) {
    const auto& from = uploaded[index_of(names, p.key())].value;
    param_names_.push_back(p.key());
    std::vector<std::int64_t> shape{clients};
    for (auto d : from.sizes()) shape.push_back(d);
    // Always a copy: a pack of one must not train the task's own tensors in place.
    params_.push_back(torch::empty(shape, from.options().device(device)).copy_(from.unsqueeze(0)));
    // Block names in registration order: "layer2" and "layer2_1" are blocks, and a block
    // with a 1x1 shortcut is the first of a later stage, which halves the resolution.
    if (resnet_ && p.key().rfind("layer", 0) == 0 && ends_with(p.key(), ".conv1.weight"))
      blocks_.push_back({p.key().substr(0, p.key().size() - std::string(".conv1.weight").size()), 1, false});
    if (resnet_ && ends_with(p.key(), ".shortcut_conv.weight"))
      blocks_.back().stride = 2, blocks_.back().shortcut = true;
  }
  for (std::size_t i = 0; i < start.size(); ++i) {
    const auto& t = start[i];
    if (ends_with(t.name, ".running_mean") || ends_with(t.name, ".running_var")) {
      stat_names_.push_back(t.name);
      const auto& from = uploaded[i].value;
      stats_.push_back(torch::empty({clients, from.numel()}, from.options()).copy_(from.reshape({1, -1})));
    } else if (ends_with(t.name, ".num_batches_tracked")) {
      tracked_start_[t.name] = t.value.item<std::int64_t>();
    } else if (std::find(param_names_.begin(), param_names_.end(), t.name) == param_names_.end()) {
      throw std::invalid_argument("tensor '" + t.name + "' does not pack");
    }
  }
  for (const auto& p : params_) {
    momentum_.push_back(torch::zeros_like(p));
    start_.push_back(p.slice(0, 0, 1).clone());
  }
  neg_lr_ = torch::zeros({}, params_.front().options());
  steps_.assign(static_cast<std::size_t>(clients), 0);
}

const torch::Tensor& PackedModel::at(const Tensors& params, const std::string& name) const {
  return params[index_of(param_names_, name)];
}

// x [B, S*Cin, H, W] -> [B, S*Cout, H', W']: one grouped convolution, a group per client.
torch::Tensor PackedModel::conv(const Tensors& w, const torch::Tensor& x, const std::string& name, std::int64_t stride,
                                std::int64_t padding, std::int64_t rows) const {
  const auto& weight = at(w, name + ".weight");
  auto options = F::Conv2dFuncOptions().stride(stride).padding(padding).groups(rows);
  if (std::find(param_names_.begin(), param_names_.end(), name + ".bias") != param_names_.end())
    options.bias(at(w, name + ".bias").flatten());
  return F::conv2d(x, weight.flatten(0, 1), options);
}

// BatchNorm over the S*C stacked channels: each client's own batch statistics, and its own
// running ones updated in place.
torch::Tensor PackedModel::norm(const Tensors& w, Tensors& stats, const torch::Tensor& x,
                                const std::string& name) const {
  auto mean = stats[index_of(stat_names_, name + ".running_mean")].view({-1});
  auto var = stats[index_of(stat_names_, name + ".running_var")].view({-1});
  return F::batch_norm(x, mean, var,
                       F::BatchNormFuncOptions()
                           .weight(at(w, name + ".weight").flatten())
                           .bias(at(w, name + ".bias").flatten())
                           .training(true));
}

// features [S, B, in] -> [S, B, out] with weight [S, out, in], bias [S, out].
torch::Tensor PackedModel::linear(const Tensors& w, const torch::Tensor& features, const std::string& name) const {
  return torch::baddbmm(at(w, name + ".bias").unsqueeze(1), features, at(w, name + ".weight").transpose(1, 2));
}

torch::Tensor PackedModel::forward(const Tensors& w, Tensors& stats, const torch::Tensor& x, std::int64_t rows) const {
  const auto batch = x.size(0);
  // [B, S*C, ...] -> [S, B, C*...]: each client's features in its own row.
  auto per_client = [&](const torch::Tensor& y) { return y.reshape({batch, rows, -1}).transpose(0, 1); };
  if (!resnet_) {
    auto y = F::max_pool2d(torch::relu(conv(w, x, "conv1", 1, padding_, rows)), F::MaxPool2dFuncOptions(2));
    y = F::max_pool2d(torch::relu(conv(w, y, "conv2", 1, padding_, rows)), F::MaxPool2dFuncOptions(2));
    return linear(w, torch::relu(linear(w, per_client(y), "fc")), "head");
  }
  auto y = torch::relu(norm(w, stats, conv(w, x, "stem", 1, 1, rows), "stem_bn"));
  for (const auto& b : blocks_) {
    auto h = torch::relu(norm(w, stats, conv(w, y, b.name + ".conv1", b.stride, 1, rows), b.name + ".bn1"));
    h = norm(w, stats, conv(w, h, b.name + ".conv2", 1, 1, rows), b.name + ".bn2");
    const auto skip =
        b.shortcut ? norm(w, stats, conv(w, y, b.name + ".shortcut_conv", b.stride, 0, rows), b.name + ".shortcut_bn")
                   : y;
    y = torch::relu(h + skip);
  }
  return linear(w, per_client(y.mean({2, 3})), "head");
}

std::pair<torch::Tensor, torch::Tensor> PackedModel::step(const std::vector<std::int64_t>& rows, const torch::Tensor& x,
                                                          const torch::Tensor& y, const PackedSgd& sgd) {
  return step(rows, torch::tensor(rows, torch::kInt64).to(params_.front().device()), x, y, sgd);
}

std::pair<torch::Tensor, torch::Tensor> PackedModel::step(const std::vector<std::int64_t>& rows,
                                                          const torch::Tensor& index, const torch::Tensor& x,
                                                          const torch::Tensor& y, const PackedSgd& sgd) {
  const auto s = static_cast<std::int64_t>(rows.size());
  const bool whole = s == clients_;  // rows ascending and distinct: all of them, in order
  Tensors w = gather(params_, index, whole);
  for (auto& t : w) t = t.detach().requires_grad_(true);
  Tensors stats = gather(stats_, index, whole);
  Tensors momentum = gather(momentum_, index, whole);

  const auto logits = forward(w, stats, x, s);  // [S, B, classes]
  const auto batch = logits.size(1);
  auto loss = F::cross_entropy(logits.reshape({s * batch, -1}), y.reshape({-1}),
                               F::CrossEntropyFuncOptions().reduction(torch::kNone))
                  .view({s, batch})
                  .mean(1);
  if (sgd.proximal_mu > 0) loss = loss + proximal_distance(w) * (sgd.proximal_mu / 2.0);
  loss.sum().backward();  // each row's parameters see only their own client's loss
  apply_sgd(w, momentum, sgd);

  torch::NoGradGuard no_grad;
  if (whole) {
    for (std::size_t i = 0; i < w.size(); ++i) params_[i] = w[i].detach();
    momentum_ = momentum;
  } else {
    scatter(params_, w, index);
    scatter(momentum_, momentum, index);
    scatter(stats_, stats, index);
  }
  for (auto r : rows) ++steps_[static_cast<std::size_t>(r)];
  const auto correct = logits.detach().argmax(2).eq(y).sum(1);
  return {loss.detach(), correct};
}

void PackedModel::set_learning_rate(double learning_rate) { neg_lr_.fill_(-learning_rate); }

void PackedModel::count_steps(const std::vector<std::int64_t>& rows) {
  for (auto r : rows) ++steps_[static_cast<std::size_t>(r)];
}

void PackedModel::restart(const NamedTensors& start) {
  check_compatible(layout_, start);
  torch::NoGradGuard no_grad;
  const auto uploaded = upload_state(start, params_.front().device());
  std::vector<std::string> names;
  for (const auto& t : layout_) names.push_back(t.name);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const auto& from = uploaded[index_of(names, param_names_[i])].value;
    params_[i].copy_(from.unsqueeze(0));
    start_[i].copy_(from.unsqueeze(0));
    momentum_[i].zero_();
  }
  for (std::size_t i = 0; i < start.size(); ++i) {
    const auto& name = start[i].name;
    if (ends_with(name, ".running_mean") || ends_with(name, ".running_var"))
      stats_[index_of(stat_names_, name)].copy_(uploaded[i].value.reshape({1, -1}));
    else if (ends_with(name, ".num_batches_tracked"))
      tracked_start_[name] = start[i].value.item<std::int64_t>();
  }
  steps_.assign(static_cast<std::size_t>(clients_), 0);
}

std::pair<torch::Tensor, torch::Tensor> PackedModel::step_padded(const torch::Tensor& x, const torch::Tensor& y,
                                                                 const torch::Tensor& sizes, const PackedSgd& sgd) {
  if (has_batch_statistics()) throw std::logic_error("a padded pack step for a model with batch statistics");
  Tensors w = params_;
  for (auto& t : w) t = t.detach().requires_grad_(true);
  const auto logits = forward(w, stats_, x, clients_);  // [K, P, classes]
  const auto pad = logits.size(1);
  const auto real = torch::arange(pad, sizes.options()).unsqueeze(0).lt(sizes.unsqueeze(1));  // [K, P]
  const auto active = sizes.gt(0).to(logits.scalar_type());
  const auto ce = F::cross_entropy(logits.reshape({clients_ * pad, -1}), y.reshape({-1}),
                                   F::CrossEntropyFuncOptions().reduction(torch::kNone))
                      .view({clients_, pad});
  // Padding rows weigh exactly 0, so their gradient is exactly 0; a row without samples has a
  // zero loss and, with its proximal term weighed by 0 too, a zero gradient.
  auto loss = (ce * real.to(ce.scalar_type())).sum(1) / sizes.clamp_min(1).to(ce.scalar_type());
  if (sgd.proximal_mu > 0) loss = loss + proximal_distance(w) * (sgd.proximal_mu / 2.0) * active;
  loss.sum().backward();
  apply_sgd(w, momentum_, sgd, active);

  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < w.size(); ++i) params_[i] = w[i].detach();
  const auto correct = logits.detach().argmax(2).eq(y).logical_and(real).sum(1);
  return {loss.detach(), correct};
}

torch::Tensor PackedModel::proximal_distance(const Tensors& w) const {
  auto distance = torch::zeros({w.front().size(0)}, w.front().options().requires_grad(false));
  for (std::size_t i = 0; i < w.size(); ++i) distance = distance + (w[i] - start_[i]).pow(2).flatten(1).sum(1);
  return distance;
}

// torch::optim::SGD's step (weight decay, then momentum, then the learning rate), after
// clip_grad_norm_'s clipping, each with per-row norms.
void PackedModel::apply_sgd(Tensors& w, Tensors& momentum, const PackedSgd& sgd, const torch::Tensor& active) const {
  torch::NoGradGuard no_grad;
  auto per_row = [](const torch::Tensor& scale, const torch::Tensor& like) {
    std::vector<std::int64_t> shape(static_cast<std::size_t>(like.dim()), 1);
    shape[0] = scale.size(0);
    return scale.view(shape);
  };
  if (sgd.grad_clip > 0) {
    Tensors norms;
    for (const auto& t : w) norms.push_back(t.grad().flatten(1).norm(2, 1));
    const auto total = norms.size() == 1 ? norms.front() : torch::stack(norms, 1).norm(2, 1);
    const auto coef = torch::clamp(sgd.grad_clip / (total + 1e-6), c10::nullopt, 1.0);
    for (auto& t : w) t.mutable_grad().mul_(per_row(coef, t));
  }
  // A resting row (active 0) gets d = 0 and a momentum factor of 1; a stepping row's factors are
  // exactly 1 and the momentum, so its arithmetic is the unmasked step's to the bit.
  const bool masked = active.defined();
  for (std::size_t i = 0; i < w.size(); ++i) {
    auto d = w[i].grad();
    if (sgd.weight_decay != 0) d = d.add(w[i], sgd.weight_decay);
    if (masked) d = d * per_row(active, d);
    if (sgd.momentum != 0) {
      // A zero buffer times momentum plus d is d: torch's first step, which copies d.
      if (masked)
        momentum[i].mul_(per_row(active * sgd.momentum + (1.0 - active), d)).add_(d);
      else
        momentum[i].mul_(sgd.momentum).add_(d);
      d = masked ? momentum[i] * per_row(active, d) : momentum[i];
    }
    // The padded step's learning rate is a device tensor (step_padded).
    if (masked)
      w[i].addcmul_(d, neg_lr_);
    else
      w[i].add_(d, -sgd.learning_rate);
  }
}

std::vector<NamedTensors> PackedModel::unpack_all(const std::vector<torch::Tensor>& also,
                                                  std::vector<torch::Tensor>& also_out) const {
  std::vector<torch::Tensor> sources = also;
  sources.insert(sources.end(), params_.begin(), params_.end());
  sources.insert(sources.end(), stats_.begin(), stats_.end());
  const auto device = params_.front().device();
  const auto host = device.is_cpu() ? sources : download(sources, device);
  const auto params = host.begin() + static_cast<std::ptrdiff_t>(also.size());
  const auto stats = params + static_cast<std::ptrdiff_t>(params_.size());
  also_out.assign(host.begin(), params);
  const Tensors host_params(params, stats), host_stats(stats, host.end());
  std::vector<NamedTensors> out;
  for (std::int64_t row = 0; row < clients_; ++row) out.push_back(row_state(row, host_params, host_stats));
  return out;
}

NamedTensors PackedModel::unpack(std::int64_t row) const { return row_state(row, params_, stats_); }

NamedTensors PackedModel::row_state(std::int64_t row, const Tensors& params, const Tensors& stats) const {
  NamedTensors out;
  for (const auto& t : layout_) {
    torch::Tensor value;
    if (ends_with(t.name, ".num_batches_tracked")) {
      // On the CPU like every other tensor of the row, wherever the prototype lives.
      value = torch::full(t.value.sizes(), tracked_start_.at(t.name) + steps_[static_cast<std::size_t>(row)],
                          t.value.options().device(torch::kCPU));
    } else if (ends_with(t.name, ".running_mean") || ends_with(t.name, ".running_var")) {
      value = stats[index_of(stat_names_, t.name)][row].to(torch::kCPU).clone();
    } else {
      value = params[index_of(param_names_, t.name)][row].to(torch::kCPU).clone();
    }
    out.push_back({t.name, value});
  }
  return out;
}

}  // namespace drift
