#include "engine/population/world_timeline.hpp"

#include <algorithm>

namespace drift {

WorldTimeline::WorldTimeline(const Scenario& scenario, const Population& population, ClientAvailability& availability,
                             Presence& presence)
    : population_(population), entries_(scenario.timeline), applied_(entries_.size(), 0), move_to_(entries_.size(), 0) {
  using A = TimelineAction;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const auto& e = entries_[i];
    if (e.action == A::move) {  // at a cloud round's start, when due (validation checked the edge)
      move_to_[i] = move_destination(scenario.hierarchy, e.edge).value_or(kHomeEdge);
      continue;
    }
    if (is_edge_outage(e)) {  // an edge's outage: EdgePresence's, known in advance
      applied_[i] = 1;
      continue;
    }
    if (e.at_time < 0) continue;
    if (e.action == A::offline || e.action == A::online || e.action == A::leave) {
      apply_to_clients(i, e.at_time, availability, presence);
      applied_[i] = 1;
    } else if (e.action == A::join) {
      // Of several joins known in advance, the latest decides (a round's join is immediate).
      presence.join_no_earlier_than(group_of(i), e.at_time);
      applied_[i] = 1;
    }
  }
}

std::vector<std::size_t> WorldTimeline::take_due(std::uint32_t round, double t) {
  std::vector<std::size_t> due;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (applied_[i]) continue;
    const auto& e = entries_[i];
    if (!(e.at_round > 0 ? e.at_round <= static_cast<std::int64_t>(round) : e.at_time <= t)) continue;
    applied_[i] = 1;
    due.push_back(i);
  }
  return due;
}

double WorldTimeline::next_timed_entry() const {
  double next = kNever;
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (!applied_[i] && entries_[i].at_time >= 0) next = std::min(next, entries_[i].at_time);
  return next;
}

bool WorldTimeline::any_pending() const { return std::find(applied_.begin(), applied_.end(), 0) != applied_.end(); }

std::uint32_t WorldTimeline::group_of(std::size_t index) const {
  const auto& e = entries_.at(index);
  return e.group.empty() ? kNoGroup : population_.group_index(e.group);
}

void WorldTimeline::apply_to_world(std::size_t index, double t, ClientAvailability& availability, Presence& presence,
                                   EdgeMembership& edges) const {
  if (entries_.at(index).action == TimelineAction::move)
    edges.move(population_.group_members.at(group_of(index)), move_to_.at(index));
  else
    apply_to_clients(index, t, availability, presence);
}

void WorldTimeline::apply_to_clients(std::size_t index, double t, ClientAvailability& availability,
                                     Presence& presence) const {
  const auto g = group_of(index);
  switch (entries_.at(index).action) {
    case TimelineAction::offline:
      availability.force(g, t, false);
      break;
    case TimelineAction::online:
      availability.force(g, t, true);
      break;
    case TimelineAction::leave:
      availability.force(g, t, false);
      presence.leave(g, t);
      break;
    case TimelineAction::join:
      presence.join(g, t);
      break;
    default:
      break;  // speed, deadline: the driver's; sampler, fraction: the sampler's; move: above
  }
}

}  // namespace drift
