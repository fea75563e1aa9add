#pragma once
// What several algorithms share about their parameters: the neighbour check and the weighting
// of client changes.
#include <optional>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/config/choices.hpp"
#include "engine/config/param_spec.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

// The federation check of algorithms that merge each client with its `M` nearest peers:
// M must leave someone out of the cohort, or every client merges with everyone.
std::string neighbours_below_cohort(const ParamSet& params, const FederationShape& shape);

// How a server averages the client changes: `uniform` 1/|S| (the FedOpt and SCAFFOLD papers) or
// by `samples` N_k / sum N.
enum class UpdateWeighting { uniform, samples };
template <>
struct ChoiceNames<UpdateWeighting> {
  static constexpr std::array<std::string_view, 2> names{"uniform", "samples"};
};

std::vector<double> update_weights(UpdateWeighting weighting, const std::vector<ClientUpdate>& updates);

}  // namespace drift
