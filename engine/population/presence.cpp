#include "engine/population/presence.hpp"

#include <algorithm>

namespace drift {

Presence::Presence(const Population& population)
    : population_(population),
      join_time_(population.group_names.size(), 0.0),
      leave_time_(population.group_names.size(), kNever),
      held_out_in_group_(population.group_names.size(), 0) {
  for (std::uint32_t c = 0; c < population.held_out.size(); ++c) {
    if (!population.held_out[c]) continue;
    const auto g = population.group[c];
    ++(g == kNoGroup ? held_out_ungrouped_ : held_out_in_group_[g]);
  }
}

bool Presence::present(std::uint32_t client, double t) const {
  if (population_.is_held_out(client)) return false;
  const auto g = population_.group[client];
  if (g == kNoGroup) return true;
  return t >= join_time_[g] && t < leave_time_[g];
}

std::uint32_t Presence::present_count(double t) const {
  // Held-out clients are absent too, those of an absent group counted once.
  std::uint64_t absent = held_out_ungrouped_;
  for (std::size_t g = 0; g < join_time_.size(); ++g)
    absent += t >= join_time_[g] && t < leave_time_[g] ? held_out_in_group_[g] : population_.group_members[g].size();
  return static_cast<std::uint32_t>(population_.size() - absent);
}

std::uint32_t Presence::present_count(const std::vector<std::uint32_t>& by_group, double t) const {
  std::uint64_t present = by_group.back();
  for (std::size_t g = 0; g + 1 < by_group.size(); ++g)
    present += t >= join_time_[g] && t < leave_time_[g] ? by_group[g] : 0;
  return static_cast<std::uint32_t>(present);
}

double Presence::join_time(std::uint32_t client) const {
  if (population_.is_held_out(client)) return kNever;
  const auto g = population_.group[client];
  return g == kNoGroup ? 0.0 : join_time_[g];
}

double Presence::leave_time(std::uint32_t client) const {
  if (population_.is_held_out(client)) return 0.0;
  const auto g = population_.group[client];
  return g == kNoGroup ? kNever : leave_time_[g];
}

void Presence::join_no_earlier_than(std::uint32_t group, double t) {
  join_time_[group] = std::max(join_time_[group], t);
}

void Presence::leave(std::uint32_t group, double t) { leave_time_[group] = std::min(leave_time_[group], t); }

}  // namespace drift
