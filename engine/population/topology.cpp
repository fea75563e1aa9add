#include "engine/population/topology.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <string>

#include "engine/config/suggest.hpp"
#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/csv_table.hpp"
#include "engine/population/population.hpp"

namespace drift {
namespace {

// A seeded deal: a shuffle from the "edge-assignment" stream, then client k of the shuffle to
// edge k mod edges, so edges differ in size by at most one client.
std::vector<std::uint32_t> deal_uniformly(std::uint64_t seed, std::uint32_t clients, std::uint32_t edges) {
  std::vector<std::uint32_t> order(clients);
  std::iota(order.begin(), order.end(), 0u);
  Rng rng = make_stream(seed, "edge-assignment");
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  std::vector<std::uint32_t> edge_of(clients);
  for (std::uint32_t k = 0; k < clients; ++k) edge_of[order[k]] = k % edges;
  return edge_of;
}

// Label skew: clients sorted by their most frequent label (ties: the lower label, then the id),
// cut into `edges` consecutive blocks of near-equal size.
std::vector<std::uint32_t> by_dominant_label(const Population& p, std::uint32_t edges) {
  if (p.histograms.empty())
    throw UserError("hierarchy.assign = label needs the clients' label histograms (this population has none)");
  const auto n = p.size();
  std::vector<std::int64_t> dominant(n);
  for (std::uint32_t c = 0; c < n; ++c) {
    const auto& h = p.histograms[c];
    dominant[c] = std::max_element(h.begin(), h.end()) - h.begin();
  }
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return dominant[a] < dominant[b]; });
  std::vector<std::uint32_t> edge_of(n);
  for (std::uint64_t k = 0; k < n; ++k) edge_of[order[k]] = static_cast<std::uint32_t>(k * edges / n);
  return edge_of;
}

// The group each edge holds: a named edge its `group` key's, or its name's; numbered edges the
// groups in name order.
std::vector<std::uint32_t> held_groups(const HierarchyConfig& h, const Population& p) {
  std::vector<std::uint32_t> held(h.edges);
  if (h.named.empty()) {
    if (p.group_names.size() != h.edges)
      throw UserError("hierarchy.assign = group puts group i on edge i: hierarchy.edges is " + std::to_string(h.edges) +
                      " but the scenario has " + std::to_string(p.group_names.size()) + " groups");
    std::iota(held.begin(), held.end(), 0u);
    return held;
  }
  for (std::uint32_t e = 0; e < h.edges; ++e) {
    const auto& edge = h.named[e];
    const auto& name = edge.group.empty() ? edge.name : edge.group;
    const auto it = std::find(p.group_names.begin(), p.group_names.end(), name);
    if (it == p.group_names.end())
      throw UserError("hierarchy.assign = group: " + edge_label(h, e) + " holds group '" + name +
                      "', which the scenario does not define (set hierarchy.edge." + edge.name + ".group to one of " +
                      (p.group_names.empty() ? std::string("its [groups.NAME]") : join(p.group_names)) + ")");
    held[e] = static_cast<std::uint32_t>(it - p.group_names.begin());
    for (std::uint32_t o = 0; o < e; ++o)
      if (held[o] == held[e])
        throw UserError("hierarchy.assign = group: " + edge_label(h, o) + " and " + edge_label(h, e) +
                        " both hold group '" + name + "' (a client reports to one edge)");
  }
  return held;
}

std::vector<std::uint32_t> by_group(const HierarchyConfig& h, const Population& p) {
  const auto held = held_groups(h, p);
  std::vector<std::uint32_t> edge_of_group(p.group_names.size(), kNoGroup);
  for (std::uint32_t e = 0; e < held.size(); ++e) edge_of_group[held[e]] = e;
  std::vector<std::uint32_t> edge_of(p.size());
  for (std::uint32_t c = 0; c < p.size(); ++c) {
    if (p.group[c] == kNoGroup)
      throw UserError("hierarchy.assign = group: client " + std::to_string(c) +
                      " is in no group, so it has no edge (give every client a group, or assign by uniform or label)");
    edge_of[c] = edge_of_group[p.group[c]];
    if (edge_of[c] == kNoGroup)
      throw UserError("hierarchy.assign = group: client " + std::to_string(c) + " is in group '" +
                      p.group_names[p.group[c]] + "', which no edge holds");
  }
  return edge_of;
}

// hierarchy.file: each client's row `client,edge`, the edge by its number or a named edge's name.
std::vector<std::uint32_t> from_file(const HierarchyConfig& h, const Population& p) {
  const auto table = read_csv(h.file, {"client", "edge"}, "hierarchy.file, the clients' edges", {"edge"});
  const auto client_col = column_index(table, "client");
  constexpr std::uint32_t kUnset = 0xffffffffu;
  std::vector<std::uint32_t> edge_of(p.size(), kUnset);
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const auto where = table.path + ":" + std::to_string(table.lines[i]) + ": ";
    const double id = table.rows[i][client_col];
    if (id >= p.size())
      throw UserError(where + "client " + std::to_string(static_cast<std::uint64_t>(id)) + " is past the " +
                      std::to_string(p.size()) + " clients of the federation");
    const auto c = static_cast<std::uint32_t>(id);
    if (edge_of[c] != kUnset) throw UserError(where + "client " + std::to_string(c) + " has a second row");
    const auto& text = table.texts[i].front();  // the one text column
    const auto e = edge_by_text(h, text);
    if (!e) throw UserError(where + "edge '" + text + "' is not one of " + edge_choices(h));
    edge_of[c] = *e;
  }
  for (std::uint32_t c = 0; c < p.size(); ++c)
    if (edge_of[c] == kUnset)
      throw UserError(h.file + ": client " + std::to_string(c) +
                      " has no row, so it has no edge (every client needs one)");
  return edge_of;
}

}  // namespace

std::vector<std::uint32_t> assign_edges(const Scenario& s, const Population& p) {
  const auto edges = s.hierarchy.edges;
  if (edges == 0) return {};
  if (edges > p.size())
    throw UserError("hierarchy.edges = " + std::to_string(edges) + " for " + std::to_string(p.size()) +
                    " clients: an edge would hold no client");
  std::vector<std::uint32_t> edge_of;
  switch (s.hierarchy.assign) {
    case EdgeAssignment::uniform:
      edge_of = deal_uniformly(s.seed, p.size(), edges);
      break;
    case EdgeAssignment::label:
      edge_of = by_dominant_label(p, edges);
      break;
    case EdgeAssignment::group:
      edge_of = by_group(s.hierarchy, p);
      break;
    case EdgeAssignment::file:
      edge_of = from_file(s.hierarchy, p);
      break;
  }
  const auto members = edge_members(edge_of, edges);
  for (std::uint32_t e = 0; e < edges; ++e) {
    if (members[e].empty())
      throw UserError("hierarchy: " + edge_label(s.hierarchy, e) +
                      " holds no client under assign = " + name_of(s.hierarchy.assign));
    const bool all_held_out =
        std::all_of(members[e].begin(), members[e].end(), [&](auto c) { return p.is_held_out(c); });
    if (all_held_out)
      throw UserError("hierarchy: every client of " + edge_label(s.hierarchy, e) +
                      " is held out (federation.held_out), so the edge could never train");
  }
  return edge_of;
}

std::vector<std::vector<std::uint32_t>> edge_members(const std::vector<std::uint32_t>& edge_of, std::uint32_t edges) {
  std::vector<std::vector<std::uint32_t>> members(edges);
  for (std::uint32_t c = 0; c < edge_of.size(); ++c) members[edge_of[c]].push_back(c);
  return members;
}

EdgeProfile edge_profile(const HierarchyConfig& h, std::uint32_t edge) {
  EdgeProfile p = edge < h.named.size() ? h.named[edge] : h.shared_profile();
  if (p.phase < 0) p.phase = static_cast<double>(edge) / static_cast<double>(std::max<std::uint32_t>(h.edges, 1));
  return p;
}

std::optional<std::uint32_t> edge_by_text(const HierarchyConfig& h, const std::string& text) {
  for (std::uint32_t k = 0; k < h.named.size(); ++k)
    if (h.named[k].name == text) return k;
  const bool number = !text.empty() && text.size() < 10 &&
                      std::all_of(text.begin(), text.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
  if (!number || std::stoul(text) >= h.edges) return std::nullopt;
  return static_cast<std::uint32_t>(std::stoul(text));
}

std::string edge_choices(const HierarchyConfig& h) {
  std::vector<std::string> names;
  for (const auto& n : h.named) names.push_back(n.name);
  return "the " + std::to_string(h.edges) + " edges (" +
         (names.empty() ? "numbers 0 to " + std::to_string(h.edges - 1) : "names " + join(names)) + ")";
}

std::string edge_label(const HierarchyConfig& h, std::uint32_t edge) {
  return edge < h.named.size() ? "edge '" + h.named[edge].name + "'" : "edge " + std::to_string(edge);
}

double expected_online_edges(const HierarchyConfig& h) {
  double online = 0.0;
  for (std::uint32_t e = 0; e < h.edges; ++e) {
    const auto p = edge_profile(h, e);
    online += p.availability == EdgeAvailability::diurnal ? p.online_fraction : 1.0;  // a model's: not known here
  }
  return online;
}

namespace {
// Where in its cycle the edge is at time t, in [0, 1).
double cycle_phase(const EdgeProfile& p, double t) {
  const double x = t / p.period + p.phase;
  return x - std::floor(x);
}
}  // namespace

bool edge_online(const HierarchyConfig& h, std::uint32_t edge, double t) {
  const auto p = edge_profile(h, edge);
  if (p.availability == EdgeAvailability::always) return true;
  return cycle_phase(p, t) < p.online_fraction;
}

double edge_next_offline(const HierarchyConfig& h, std::uint32_t edge, double t) {
  const auto p = edge_profile(h, edge);
  if (p.availability == EdgeAvailability::always || p.online_fraction >= 1.0) return kNever;
  const double phase = cycle_phase(p, t);
  if (phase >= p.online_fraction) return t;
  return t + (p.online_fraction - phase) * p.period;
}

double edge_next_online(const HierarchyConfig& h, std::uint32_t edge, double t) {
  const auto p = edge_profile(h, edge);
  if (p.availability == EdgeAvailability::always) return t;
  if (p.online_fraction <= 0.0) return kNever;
  const double phase = cycle_phase(p, t);
  if (phase < p.online_fraction) return t;
  return t + (1.0 - phase) * p.period;
}

}  // namespace drift
