#pragma once
// Shorthands for declaring algorithm parameters.
#include <optional>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/config/param_spec.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

ParamSpec number_param(std::string key, double def, std::string help, std::optional<double> min = std::nullopt,
                       std::optional<double> max = std::nullopt, bool min_exclusive = false);
ParamSpec integer_param(std::string key, std::int64_t def, std::string help, std::optional<double> min = std::nullopt,
                        std::optional<double> max = std::nullopt);
ParamSpec bool_param(std::string key, bool def, std::string help);
ParamSpec string_param(std::string key, std::string def, std::string help);
ParamSpec choice_param(std::string key, std::string def, std::vector<std::string> choices, std::string help);

// The federation check of algorithms that merge each client with its `M` nearest peers:
// M must leave someone out of the cohort, or every client merges with everyone.
std::string neighbours_below_cohort(const ParamSet& params, const FederationShape& shape);

// "uniform" (1/|S|, the FedOpt and SCAFFOLD papers) or "samples" (N_k / sum N).
std::vector<double> update_weights(const std::string& weighting, const std::vector<ClientUpdate>& updates);

}  // namespace drift
