#include "edge_description.hpp"

#include <algorithm>
#include <cstdio>

#include "engine/population/edge_membership.hpp"
#include "engine/population/topology.hpp"
#include "engine/sim/drift_metrics.hpp"

namespace drift {
namespace {

std::string printed(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// "always online", "online 60 % of every 30 s, from 0.5 of the cycle", "online by markov"
std::string availability_text(const HierarchyConfig& h, const EdgeProfile& p, bool named) {
  switch (p.availability) {
    case EdgeAvailability::always:
      return "always online";
    case EdgeAvailability::diurnal:
      return "online " + printed("%g", 100 * p.online_fraction) + " % of every " + printed("%g", p.period) + " s, " +
             (named ? "from " + printed("%.3g", p.phase) + " of the cycle"
                    : std::string("edge e from e/edges of the cycle"));
    case EdgeAvailability::model:
      return "online by " + h.availability_model.model;
  }
  return "";
}

// "0.2 s latency, 1e+07 B/s up, instant down[, 0.5 s per update aggregated]"
std::string link_text(const EdgeProfile& p) {
  const auto rate = [](double bandwidth, const char* way) {
    return bandwidth > 0 ? printed("%g", bandwidth) + " B/s " + way : std::string("instant ") + way;
  };
  return printed("%g", p.latency) + " s latency, " + rate(p.up_bandwidth, "up") + ", " +
         rate(p.down_bandwidth, "down") +
         (p.aggregation_seconds > 0 ? ", " + printed("%g", p.aggregation_seconds) + " s per update aggregated" : "");
}

// "scripted outages: edge 'city' offline at 5 s, online at 9 s", or nothing.
std::string outages_text(const Scenario& scenario) {
  std::string text;
  for (const auto& e : scenario.timeline) {
    if (!is_edge_outage(e)) continue;
    const auto edge = edge_by_text(scenario.hierarchy, e.edge);
    text += std::string(text.empty() ? "scripted outages: " : ", ") + edge_label(scenario.hierarchy, edge.value_or(0)) +
            " " + name_of(e.action) + " at " + printed("%g", e.at_time) + " s";
  }
  return text;
}

// "moves: group 'commuters' (4 clients) to edge 2 at round 3; ... home at 600 s", or nothing.
std::string moves_text(const Scenario& scenario, const Population& population) {
  std::string text;
  for (const auto& e : scenario.timeline) {
    if (e.action != TimelineAction::move) continue;
    const auto to = move_destination(scenario.hierarchy, e.edge);
    const auto g = population.group_index(e.group);
    const auto clients = g == kNoGroup ? 0 : population.group_members[g].size();
    text += std::string(text.empty() ? "moves: " : "; ") + "group '" + e.group + "' (" + std::to_string(clients) +
            " clients) " +
            (to == kHomeEdge ? std::string("home") : "to " + edge_label(scenario.hierarchy, to.value_or(0))) +
            (e.at_round > 0 ? " at round " + std::to_string(e.at_round) : " at " + printed("%g", e.at_time) + " s");
  }
  return text;
}

}  // namespace

std::vector<std::string> edge_description(const Scenario& scenario, const Population& population) {
  const auto& h = scenario.hierarchy;
  if (!h.enabled()) return {};
  std::size_t fewest = SIZE_MAX, most = 0;
  double nearest = 1.0, farthest = 0.0;
  const bool labels = !population.histograms.empty();
  for (const auto& members : population.edge_members) {
    fewest = std::min(fewest, members.size());
    most = std::max(most, members.size());
    if (!labels) continue;
    const double tv = total_variation(normalised(label_counts(population, members)), population.label_distribution);
    nearest = std::min(nearest, tv);
    farthest = std::max(farthest, tv);
  }
  std::vector<std::string> lines;
  lines.push_back("edges: " + std::to_string(h.edges) + " holding " + std::to_string(fewest) + " to " +
                  std::to_string(most) + " clients (" + name_of(h.assign) + ")" +
                  (labels ? ", their labels " + printed("%.2f", nearest) + " to " + printed("%.2f", farthest) +
                                " from the population's (TV)"
                          : ""));
  if (auto moves = moves_text(scenario, population); !moves.empty()) lines.push_back(std::move(moves));
  if (auto outages = outages_text(scenario); !outages.empty()) lines.push_back(std::move(outages));
  // Numbered edges share one profile: one line; named ones each their own (a long list is cut).
  constexpr std::size_t kShown = 12;
  if (h.named.empty()) {
    const auto p = edge_profile(h, 0);
    lines.push_back("each edge: " + link_text(p) + "; " + availability_text(h, p, false));
    return lines;
  }
  for (std::uint32_t e = 0; e < h.edges && e < kShown; ++e) {
    const auto p = edge_profile(h, e);
    lines.push_back(p.name + ": " + std::to_string(population.edge_members[e].size()) + " clients, " + link_text(p) +
                    "; " + availability_text(h, p, true));
  }
  if (h.edges > kShown) lines.push_back("... and " + std::to_string(h.edges - kShown) + " more named edges");
  return lines;
}

}  // namespace drift
