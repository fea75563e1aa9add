#pragma once
// A hierarchical federation's shape ([hierarchy], docs/hierarchy.md): which edge aggregator
// each client reports to, and when an edge is online. Pure functions of the scenario and the
// population, so the server, the sampler and every worker derive the same map.
#include <cstdint>
#include <optional>
#include <string>
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

// Edge e's link and availability: its [hierarchy.edge.NAME] table, or the [hierarchy] values,
// with the diurnal phase resolved (e / edges unless set).
EdgeProfile edge_profile(const HierarchyConfig& h, std::uint32_t edge);
// "edge 'north'" for a named edge, "edge 3" otherwise: how messages name it.
std::string edge_label(const HierarchyConfig& h, std::uint32_t edge);
// Seconds for `bytes` over an edge-cloud link: its latency, plus the transfer where a bandwidth is set.
inline double edge_transfer_seconds(double latency, double bytes, double bandwidth) {
  return latency + (bandwidth > 0 ? bytes / bandwidth : 0.0);
}
// The edge a text names: a named edge's name, or an edge's number; none when neither.
std::optional<std::uint32_t> edge_by_text(const HierarchyConfig& h, const std::string& text);
// "the 3 edges (names farm, hub, port)", for messages.
std::string edge_choices(const HierarchyConfig& h);

// How many edges are online at a random moment: the sum of their online shares.
double expected_online_edges(const HierarchyConfig& h);

// The edge's own rule at virtual time t (always or diurnal; EdgePresence answers for every rule,
// the availability models' too). Diurnal: online while
// frac(t / period + phase) < online_fraction.
bool edge_online(const HierarchyConfig& h, std::uint32_t edge, double t);
// The first time >= t at which the edge is offline (t itself if offline now), or kNever.
double edge_next_offline(const HierarchyConfig& h, std::uint32_t edge, double t);
// The first time >= t at which the edge is online (t itself if online now), or kNever.
double edge_next_online(const HierarchyConfig& h, std::uint32_t edge, double t);

}  // namespace drift
