#include "engine/sim/edge_buffer.hpp"

#include <torch/torch.h>

#include <cmath>

#include "engine/tensors/tensor_archive.hpp"

namespace drift {

std::vector<double> buffer_weights(const std::vector<BufferedEdge>& buffer) {
  double total = 0.0;
  for (const auto& b : buffer) total += static_cast<double>(b.samples);
  std::vector<double> weights;
  // (No samples at all: every sender's clients moved to other edges before its model left; no step.)
  for (const auto& b : buffer)
    weights.push_back(
        total > 0 ? static_cast<double>(b.samples) / total / std::sqrt(1.0 + static_cast<double>(b.staleness)) : 0.0);
  return weights;
}

NamedTensors buffered_step(const NamedTensors& global, const std::vector<BufferedEdge>& buffer, double server_lr) {
  torch::NoGradGuard no_grad;
  const auto weights = buffer_weights(buffer);
  NamedTensors next;
  for (std::size_t i = 0; i < global.size(); ++i) {
    const auto& g = global[i].value;
    if (!g.is_floating_point()) {
      next.push_back({global[i].name, buffer.back().model[i].value.clone()});
      continue;
    }
    auto sum = torch::zeros(g.sizes(), torch::kFloat64);
    for (std::size_t k = 0; k < buffer.size(); ++k)
      sum.add_(buffer[k].model[i].value.to(torch::kFloat64) - buffer[k].pulled[i].value.to(torch::kFloat64),
               weights[k]);
    next.push_back({global[i].name, (g.to(torch::kFloat64) + sum * server_lr).to(g.scalar_type())});
  }
  return next;
}

void archive_buffered(StateArchive& ar, std::vector<BufferedEdge>& buffer) {
  ar.vector(buffer, [&](BufferedEdge& b) { archive_fields(ar, b); });
}

void archive_shares(StateArchive& ar, ClientShares& shares) {
  ar.vector(shares, [&](std::pair<std::uint32_t, double>& s) {
    ar.value(s.first);
    ar.value(s.second);
  });
}

}  // namespace drift
