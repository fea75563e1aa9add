#include "engine/sim/async_aggregation.hpp"

#include <torch/torch.h>

#include <cmath>
#include <numeric>
#include <utility>

#include "engine/tensors/tensor_archive.hpp"

namespace drift {

AsyncAggregation::AsyncAggregation(const Scenario& scenario, NamedTensors initial,
                                   std::unique_ptr<ServerAlgorithm> algorithm, AggregationStages* stages)
    : scenario_(scenario),
      algorithm_(std::move(algorithm)),
      buffered_(scenario.simulation.mode == SimulationMode::fedbuff),
      staleness_{scenario.async.staleness, scenario.async.staleness_a, scenario.async.staleness_b},
      global_(std::make_shared<NamedTensors>(std::move(initial))),
      stages_(stages) {}

bool AsyncAggregation::add(ClientUpdate update, const NamedTensors& pulled, std::uint64_t staleness,
                           std::uint32_t round) {
  check_compatible(*global_, update.weights);
  if (!buffered_) {
    pending_.updates.push_back(std::move(update));
    pending_.staleness.push_back(staleness);
    auto mean = mix(pending_.updates.back(), schedule_weight(0));
    aggregate(std::move(mean), round);
    return true;
  }
  pending_.updates.push_back(std::move(update));
  pending_.staleness.push_back(staleness);
  accumulate(pending_.updates.back(), pulled, schedule_weight(pending_.updates.size() - 1), round);
  if (static_cast<std::int64_t>(pending_.updates.size()) < scenario_.async.buffer_size) return false;
  aggregate(step(round), round);
  return true;
}

// FedAsync: the mixing weight a = alpha s(staleness); FedBuff: the delta's 1 / sqrt(1 + staleness).
double AsyncAggregation::schedule_weight(std::size_t k) const {
  const auto staleness = pending_.staleness.at(k);
  if (!buffered_) return scenario_.async.alpha * staleness_(staleness);
  return 1.0 / std::sqrt(1.0 + static_cast<double>(staleness));
}

AsyncAggregation::Applied AsyncAggregation::take_applied() { return std::exchange(applied_, {}); }

// FedAsync: (1 - a) x + a x_new, in float64.
NamedTensors AsyncAggregation::mix(const ClientUpdate& u, double a) const {
  torch::NoGradGuard no_grad;
  NamedTensors next;
  for (std::size_t i = 0; i < global_->size(); ++i) {
    const auto& g = (*global_)[i].value;
    if (!g.is_floating_point()) {
      next.push_back({(*global_)[i].name, u.weights[i].value.clone()});
      continue;
    }
    auto mixed = g.to(torch::kFloat64) * (1.0 - a) + u.weights[i].value.to(torch::kFloat64) * a;
    next.push_back({(*global_)[i].name, mixed.to(g.scalar_type())});
  }
  return next;
}

// FedBuff: sum of weight * (x_local - x_pulled), in arrival order, in float64.
void AsyncAggregation::accumulate(const ClientUpdate& u, const NamedTensors& pulled, double weight,
                                  std::uint32_t round) {
  if (stages_ && stages_->buffers()) return stages_->buffer(u, pulled, weight, round);
  torch::NoGradGuard no_grad;
  if (delta_sum_.empty())
    for (const auto& t : *global_) delta_sum_.push_back(torch::zeros(t.value.sizes(), torch::kFloat64));
  for (std::size_t i = 0; i < global_->size(); ++i) {
    if (!(*global_)[i].value.is_floating_point()) continue;
    delta_sum_[i].add_(u.weights[i].value.to(torch::kFloat64) - pulled[i].value.to(torch::kFloat64), weight);
  }
}

// FedBuff: x + eta * (sum / K); integer tensors from the last update (from x when private).
NamedTensors AsyncAggregation::step(std::uint32_t round) {
  torch::NoGradGuard no_grad;
  const double scale = scenario_.async.server_lr / static_cast<double>(pending_.updates.size());
  if (stages_ && stages_->buffers()) {
    auto [next, dp] = stages_->release_buffer(*global_, static_cast<std::uint32_t>(pending_.updates.size()),
                                              scenario_.async.server_lr, round);
    pending_.dp = dp;
    return std::move(next);
  }
  NamedTensors next;
  for (std::size_t i = 0; i < global_->size(); ++i) {
    const auto& g = (*global_)[i].value;
    if (!g.is_floating_point()) {
      next.push_back({(*global_)[i].name, pending_.updates.back().weights[i].value.clone()});
      continue;
    }
    next.push_back({(*global_)[i].name, (g.to(torch::kFloat64) + delta_sum_[i] * scale).to(g.scalar_type())});
  }
  delta_sum_.clear();
  return next;
}

// The server half, on the buffered updates in client-id order.
void AsyncAggregation::aggregate(NamedTensors mean, std::uint32_t round) {
  std::vector<std::size_t> order(pending_.updates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return pending_.updates[a].client_id < pending_.updates[b].client_id;
  });
  std::vector<ClientUpdate> sorted;
  AggregationInput input;
  input.round = round;
  for (auto k : order) {
    sorted.push_back(pending_.updates[k]);  // tensors are shared, not copied
    input.staleness.push_back(pending_.staleness[k]);
    input.pulled_version.push_back(version_ - pending_.staleness[k]);
  }
  auto next = std::make_shared<NamedTensors>(*global_);
  for (auto k : order) pending_.shares.emplace_back(pending_.updates[k].client_id, schedule_weight(k));
  algorithm_->aggregate_async(*next, std::move(mean), std::move(sorted), input);
  pending_.metrics = algorithm_->metrics();
  applied_ = std::exchange(pending_, {});
  global_ = std::move(next);
  ++version_;
}

void AsyncAggregation::archive(StateArchive& ar) {
  ar.section("aggregation");
  auto global = *global_;
  archive_named(ar, global);
  if (ar.loading()) global_ = std::make_shared<NamedTensors>(std::move(global));
  ar.value(version_);
  archive_tensors(ar, delta_sum_);
  if (stages_) stages_->archive_buffer(ar);
  ar.vector(pending_.updates, [&](ClientUpdate& u) { archive_update(ar, u); });
  ar.values(pending_.staleness);
  if (!applied_.updates.empty())
    throw std::logic_error("AsyncAggregation: archived before the last aggregation was taken");
  ar.section("server half");
  algorithm_->archive(ar);
}

}  // namespace drift
