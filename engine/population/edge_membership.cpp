#include "engine/population/edge_membership.hpp"

#include <algorithm>

#include "engine/population/population.hpp"
#include "engine/population/topology.hpp"

namespace drift {

std::optional<std::uint32_t> move_destination(const HierarchyConfig& h, const std::string& text) {
  if (auto edge = edge_by_text(h, text)) return edge;
  if (text == kHomeEdgeText) return kHomeEdge;
  return std::nullopt;
}

EdgeMembership::EdgeMembership(const Population& population)
    : population_(population),
      edge_(population.edge),
      members_(population.edge_members),
      by_group_(members_.size(), std::vector<std::uint32_t>(population.group_names.size() + 1, 0)) {
  for (std::uint32_t c = 0; c < edge_.size(); ++c) count(c, edge_[c], 1);
}

void EdgeMembership::count(std::uint32_t client, std::uint32_t edge, int by) {
  if (population_.is_held_out(client)) return;
  const auto g = population_.group[client];
  auto& n = by_group_.at(edge)[g == kNoGroup ? population_.group_names.size() : g];
  n = static_cast<std::uint32_t>(static_cast<std::int64_t>(n) + by);
}

void EdgeMembership::move(const std::vector<std::uint32_t>& clients, std::uint32_t edge) {
  bool changed = false;
  for (auto c : clients) {
    const auto to = edge == kHomeEdge ? population_.edge.at(c) : edge;
    const auto from = edge_.at(c);
    if (from == to) continue;
    auto& left = members_.at(from);
    left.erase(std::lower_bound(left.begin(), left.end(), c));
    auto& joined = members_.at(to);
    joined.insert(std::lower_bound(joined.begin(), joined.end(), c), c);
    edge_[c] = to;
    count(c, from, -1);
    count(c, to, 1);
    changed = true;
  }
  changes_ += changed ? 1 : 0;
}

}  // namespace drift
