#include "engine/sim/async_mixing.hpp"

#include <torch/torch.h>

#include <cmath>
#include <utility>

namespace drift {

AsyncMixing::AsyncMixing(const Scenario& scenario, NamedTensors initial)
    : scenario_(scenario),
      buffered_(scenario.simulation.mode == SimulationMode::fedbuff),
      staleness_{scenario.async.staleness, scenario.async.staleness_a, scenario.async.staleness_b},
      global_(std::make_shared<NamedTensors>(std::move(initial))) {}

bool AsyncMixing::add(ClientUpdate update, const NamedTensors& pulled, std::uint64_t staleness) {
  check_compatible(*global_, update.weights);
  const auto before = version_;
  if (buffered_) buffer(update, pulled, staleness);
  else mix(update, staleness);
  return version_ != before;
}

AsyncMixing::Applied AsyncMixing::take_applied() { return std::exchange(pending_, {}); }

// FedAsync: x <- (1 - a) x + a x_new with a = alpha * s(staleness).
void AsyncMixing::mix(ClientUpdate& u, std::uint64_t staleness) {
  const double a = scenario_.async.alpha * staleness_(staleness);
  torch::NoGradGuard no_grad;
  auto next = std::make_shared<NamedTensors>();
  for (std::size_t i = 0; i < global_->size(); ++i) {
    const auto& g = (*global_)[i].value;
    if (!g.is_floating_point()) {
      next->push_back({(*global_)[i].name, u.weights[i].value.clone()});
      continue;
    }
    auto mixed = g.to(torch::kFloat64) * (1.0 - a) + u.weights[i].value.to(torch::kFloat64) * a;
    next->push_back({(*global_)[i].name, mixed.to(g.scalar_type())});
  }
  pending_.updates.push_back(std::move(u));
  pending_.staleness.push_back(staleness);
  global_ = std::move(next);
  ++version_;
}

// FedBuff: buffer (x_local - x_pulled) / sqrt(1 + staleness); after K, x <- x + eta * mean.
void AsyncMixing::buffer(ClientUpdate& u, const NamedTensors& pulled, std::uint64_t staleness) {
  torch::NoGradGuard no_grad;
  if (delta_sum_.empty())
    for (const auto& t : *global_) delta_sum_.push_back(torch::zeros(t.value.sizes(), torch::kFloat64));
  const double weight = 1.0 / std::sqrt(1.0 + static_cast<double>(staleness));
  for (std::size_t i = 0; i < global_->size(); ++i) {
    if (!(*global_)[i].value.is_floating_point()) continue;
    delta_sum_[i].add_(u.weights[i].value.to(torch::kFloat64) - pulled[i].value.to(torch::kFloat64), weight);
  }
  pending_.updates.push_back(std::move(u));
  pending_.staleness.push_back(staleness);
  if (static_cast<std::int64_t>(pending_.updates.size()) < scenario_.async.buffer_size) return;
  const double scale = scenario_.async.server_lr / static_cast<double>(pending_.updates.size());
  auto next = std::make_shared<NamedTensors>();
  for (std::size_t i = 0; i < global_->size(); ++i) {
    const auto& g = (*global_)[i].value;
    if (!g.is_floating_point()) {
      next->push_back({(*global_)[i].name, pending_.updates.back().weights[i].value.clone()});
      continue;
    }
    next->push_back({(*global_)[i].name, (g.to(torch::kFloat64) + delta_sum_[i] * scale).to(g.scalar_type())});
  }
  delta_sum_.clear();
  global_ = std::move(next);
  ++version_;
}

}  // namespace drift
