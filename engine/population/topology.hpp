#pragma once
// A hierarchical federation's shape ([hierarchy], docs/hierarchy.md): which edge aggregator
// each client reports to, and when an edge is online. Pure functions of the scenario and the
// population, so the server, the sampler and every worker derive the same map.
#include <cstdint>
#include <vector>

#include "engine/config/scenario.hpp"

namespace drift {

struct Population;

// Each client's edge under hierarchy.assign, or empty for a flat federation. Throws UserError
// where an edge would hold no client, or the rule cannot be applied (group: a client in no group,
// a group count other than hierarchy.edges; label: no label histograms).
std::vector<std::uint32_t> assign_edges(const Scenario& scenario, const Population& population);

// The members of each edge, ascending, from assign_edges' map.
std::vector<std::vector<std::uint32_t>> edge_members(const std::vector<std::uint32_t>& edge_of, std::uint32_t edges);

// hierarchy.availability at virtual time t. Diurnal: edge e is online while
// frac(t / period + e / edges) < online_fraction.
bool edge_online(const HierarchyConfig& h, std::uint32_t edge, double t);
// The first time >= t at which the edge is offline (t itself if offline now), or kNever.
double edge_next_offline(const HierarchyConfig& h, std::uint32_t edge, double t);
// The first time >= t at which the edge is online (t itself if online now), or kNever.
double edge_next_online(const HierarchyConfig& h, std::uint32_t edge, double t);

}  // namespace drift
