#pragma once
// Who is registered with the federation at a virtual time: every client from the start,
// except the members of a group that joins later or leaves, and held-out clients (never). Timeline `join` and `leave`
// entries move a group's times.
#include <cstdint>
#include <vector>

#include "engine/population/availability.hpp"
#include "engine/population/population.hpp"

namespace drift {

class Presence {
 public:
  explicit Presence(const Population& population);

  bool present(std::uint32_t client, double t) const;
  std::uint32_t present_count(double t) const;
  // The same among clients counted per group, held-out ones left out (the last entry: no group),
  // as EdgeMembership::counts_by_group gives an edge's.
  std::uint32_t present_count(const std::vector<std::uint32_t>& by_group, double t) const;
  // When the client's group leaves for good, or kNever (no group, or it stays).
  double leave_time(std::uint32_t client) const;
  // When the client's group (re)joins, or 0 (no group, or present from the start).
  double join_time(std::uint32_t client) const;

  void join(std::uint32_t group, double t) { join_time_[group] = t; }
  // A join known in advance: the group is absent until the latest such time.
  void join_no_earlier_than(std::uint32_t group, double t);
  void leave(std::uint32_t group, double t);

 private:
  const Population& population_;
  std::vector<double> join_time_;   // per group: absent before
  std::vector<double> leave_time_;  // per group: gone from
  // Held-out clients (never present) per group, and without a group.
  std::vector<std::uint64_t> held_out_in_group_;
  std::uint64_t held_out_ungrouped_ = 0;
};

}  // namespace drift
