#pragma once
// Checks of the [simulation] and [evaluation] sections that involve several keys, for
// scenario_builder.
#include <string>

#include "engine/config/scenario.hpp"

namespace drift {

// Throws UserError (prefixed with `source`) when simulation.partial_work or
// simulation.stragglers cannot run as configured.
void check_partial_work(const Scenario& s, const std::string& source);

// Throws UserError when evaluation.per_client has no client splits to score: it needs
// data.client_test_fraction or natural clients, and a shared model (private models are scored
// per client already); or when both federation.held_out and held_out_group are set.
void check_per_client_evaluation(const Scenario& s, bool private_models, bool natural_clients,
                                 const std::string& source);

struct AlgorithmInfo;
// Throws UserError when [hierarchy] cannot run as configured: async modes, an algorithm that
// cannot run at the edge tier (AlgorithmInfo::edge_tier), privacy, secure aggregation, shadow
// clients, stale updates, more edges than clients or edges_per_round than edges.
void check_hierarchy(const Scenario& s, const AlgorithmInfo& algorithm, const std::string& source);

}  // namespace drift
