#pragma once
// Which edge each client reports to, as the timeline's `move` entries change it
// (docs/hierarchy.md#clients-moving-between-edges). Starts as hierarchy.assign's map; the round
// driver's roster and the sampler each hold a replica and apply the same moves at the same
// cloud-round starts, so both see the same edges' clients.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"

namespace drift {

struct Population;

// A move's destination "home": each client's edge under hierarchy.assign.
inline constexpr std::uint32_t kHomeEdge = std::numeric_limits<std::uint32_t>::max() - 1;
inline constexpr const char* kHomeEdgeText = "home";

// Where a move entry's `edge` sends clients: an edge, kHomeEdge, or none when the text names
// neither (an edge named "home" is that edge).
std::optional<std::uint32_t> move_destination(const HierarchyConfig& h, const std::string& text);

class EdgeMembership {
 public:
  explicit EdgeMembership(const Population& population);

  std::uint32_t edges() const { return static_cast<std::uint32_t>(members_.size()); }
  std::uint32_t edge_of(std::uint32_t client) const { return edge_.at(client); }
  // Edge e's clients now, ascending.
  const std::vector<std::uint32_t>& members(std::uint32_t e) const { return members_.at(e); }
  // Moves `clients` to `edge` (kHomeEdge: each to its assigned edge); a client already there stays.
  void move(const std::vector<std::uint32_t>& clients, std::uint32_t edge);
  // Edge e's clients that are not held out, counted per group (the last entry: no group), so
  // that who is present there is counted per group, not per client (Presence::present_count).
  const std::vector<std::uint32_t>& counts_by_group(std::uint32_t e) const { return by_group_.at(e); }
  // How many moves changed some client's edge: a reader that cached sizes or labels redoes them.
  std::uint64_t changes() const { return changes_; }

 private:
  const Population& population_;
  std::vector<std::uint32_t> edge_;
  std::vector<std::vector<std::uint32_t>> members_;
  std::vector<std::vector<std::uint32_t>> by_group_;
  std::uint64_t changes_ = 0;
  void count(std::uint32_t client, std::uint32_t edge, int by);
};

}  // namespace drift
