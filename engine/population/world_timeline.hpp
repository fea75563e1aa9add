#pragma once
// The scenario's timeline as the world sees it: which entries are due, and what an entry does
// to availability (offline, online, leave), registration (join, leave) and the clients' edges
// (move). The round drivers
// and the sampler each hold a replica; the driver decides when an entry applies and tells the
// sampler (SelectionRequest::timeline), so both replicas change at the same virtual times.
// What an entry does to the driver alone (speed, deadline) or to the sampler alone (sampler,
// fraction) is theirs to apply.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/edge_membership.hpp"
#include "engine/population/presence.hpp"

namespace drift {

class WorldTimeline {
 public:
  // Registers the availability and registration changes known in advance (entries at a fixed
  // virtual time), which take effect exactly then, even in the middle of a task.
  WorldTimeline(const Scenario& scenario, const Population& population, ClientAvailability& availability,
                Presence& presence);

  // Indices of the entries due at the start of `round` or at a time <= t, not applied yet;
  // they are marked applied.
  std::vector<std::size_t> take_due(std::uint32_t round, double t);
  // Virtual time of the next fixed-time entry not applied yet, or kNever.
  double next_timed_entry() const;
  // Whether some entry, at a round or at a time, is not applied yet.
  bool any_pending() const;
  // Marks entry `index` applied without applying it (a restored checkpoint replays it).
  void mark_applied(std::size_t index) { applied_.at(index) = 1; }

  const TimelineEntry& entry(std::size_t index) const { return entries_.at(index); }
  std::size_t size() const { return entries_.size(); }
  // The group entry `index` names, or kNoGroup.
  std::uint32_t group_of(std::size_t index) const;
  // Applies entry `index`'s effect on availability, registration and edges, from time t.
  void apply_to_world(std::size_t index, double t, ClientAvailability& availability, Presence& presence,
                      EdgeMembership& edges) const;

 private:
  void apply_to_clients(std::size_t index, double t, ClientAvailability& availability, Presence& presence) const;

  const Population& population_;
  std::vector<TimelineEntry> entries_;
  std::vector<char> applied_;
  std::vector<std::uint32_t> move_to_;  // by entry: a move's destination (kHomeEdge: each client's own)
};

}  // namespace drift
