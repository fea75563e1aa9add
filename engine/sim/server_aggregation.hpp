#pragma once
// The arithmetic of one aggregation at a server half: the flat run's server and every edge's do
// the same (docs/hierarchy.md#where-edges-run).
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

// `updates` into `model` (none: the server half may still move it, as MIFA does with what it
// remembers); whether it moved, with the server half's metrics and the updates' shares.
EdgeAggregated aggregate_at(ServerAlgorithm& server, NamedTensors& model, const std::vector<ClientUpdate>& updates,
                            const AggregationInput& input);

}  // namespace drift
