#pragma once
// FINCH (Sarfraz et al. 2019), first-neighbour clustering with cosine distance, docs/algorithms.md#fedccl.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace drift {

// Every partition of the hierarchy, finest first: labels[i] of point i, clusters numbered
// 0.. in order of their lowest member. Each level links every cluster (every point, at the
// first level) to its first neighbour, the most cosine-similar other one (ties: the lowest
// index), and merges the connected components; the next level works on the members' means.
// Stops when a level no longer merges anything or leaves one cluster. n = 1 gives [[0]].
std::vector<std::vector<std::int64_t>> finch_hierarchy(const torch::Tensor& points);

// The partition FedCCL and FPL use: the last one with more than one cluster, or the first
// when that already has one.
std::vector<std::int64_t> finch(const torch::Tensor& points);

// Mean of the points of each cluster, [clusters, d], clusters in label order.
torch::Tensor cluster_means(const torch::Tensor& points, const std::vector<std::int64_t>& labels);

}  // namespace drift
