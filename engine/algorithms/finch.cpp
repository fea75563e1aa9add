#include "engine/algorithms/finch.hpp"

#include <numeric>
#include <stdexcept>

#include "engine/algorithms/contrastive.hpp"

namespace drift {
namespace {

std::int64_t find_root(std::vector<std::int64_t>& parent, std::int64_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// One FINCH step on m points: the label of each point, components numbered by lowest member.
std::vector<std::int64_t> first_neighbour_components(const torch::Tensor& points) {
  const auto m = points.size(0);
  std::vector<std::int64_t> parent(static_cast<std::size_t>(m));
  std::iota(parent.begin(), parent.end(), 0);
  if (m > 1) {
    const auto sim = cosine_matrix(points, points).contiguous();
    const auto s = sim.accessor<double, 2>();
    for (std::int64_t i = 0; i < m; ++i) {
      std::int64_t best = -1;
      for (std::int64_t j = 0; j < m; ++j)
        if (j != i && (best < 0 || s[i][j] > s[i][best])) best = j;  // strict: ties keep the lowest
      // Linking i to its first neighbour also links points that share a first neighbour.
      const auto a = find_root(parent, i), b = find_root(parent, best);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  }
  std::vector<std::int64_t> label(static_cast<std::size_t>(m), -1), root_label(static_cast<std::size_t>(m), -1);
  std::int64_t next = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    auto& l = root_label[static_cast<std::size_t>(find_root(parent, i))];
    if (l < 0) l = next++;
    label[static_cast<std::size_t>(i)] = l;
  }
  return label;
}

std::int64_t count_clusters(const std::vector<std::int64_t>& labels) {
  std::int64_t most = -1;
  for (auto l : labels) most = std::max(most, l);
  return most + 1;
}

}  // namespace

torch::Tensor cluster_means(const torch::Tensor& points, const std::vector<std::int64_t>& labels) {
  const auto k = count_clusters(labels);
  auto sums = torch::zeros({k, points.size(1)}, torch::kFloat64);
  auto counts = torch::zeros({k, 1}, torch::kFloat64);
  const auto index = torch::tensor(labels, torch::kInt64);
  sums.index_add_(0, index, points.to(torch::kFloat64));
  counts.index_add_(0, index, torch::ones({points.size(0), 1}, torch::kFloat64));
  return (sums / counts).to(points.scalar_type());
}

std::vector<std::vector<std::int64_t>> finch_hierarchy(const torch::Tensor& points) {
  if (points.dim() != 2 || points.size(0) == 0) throw std::invalid_argument("finch needs a non-empty [n, d] matrix");
  const auto data = points.to(torch::kCPU, torch::kFloat64);
  std::vector<std::vector<std::int64_t>> levels = {first_neighbour_components(data)};
  while (count_clusters(levels.back()) > 1) {
    const auto& current = levels.back();
    const auto merged = first_neighbour_components(cluster_means(data, current));
    if (count_clusters(merged) == count_clusters(current)) break;
    std::vector<std::int64_t> next(current.size());
    for (std::size_t i = 0; i < current.size(); ++i) next[i] = merged[static_cast<std::size_t>(current[i])];
    levels.push_back(std::move(next));
  }
  return levels;
}

std::vector<std::int64_t> finch(const torch::Tensor& points) {
  auto levels = finch_hierarchy(points);
  for (auto it = levels.rbegin(); it != levels.rend(); ++it)
    if (count_clusters(*it) > 1) return *it;
  return levels.front();
}

}  // namespace drift
