#pragma once
// Who can take part, as a round driver tracks it: registration and availability (the
// driver's replica of the world, to time drop-outs), the clients' edges, and who is working on a task.
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/edge_membership.hpp"
#include "engine/population/presence.hpp"

namespace drift {

class Roster {
 public:
  Roster(const Scenario& scenario, const Population& population);

  const Population& population() const { return population_; }
  ClientAvailability& availability() { return availability_; }
  Presence& presence() { return presence_; }
  // The clients' edges (hierarchy), as the timeline's moves leave them.
  EdgeMembership& edges() { return edges_; }
  const EdgeMembership& edges() const { return edges_; }

  // Registered, with no task in flight, and not still working on a late update.
  bool eligible(std::uint32_t client, double t) const;
  // First time in [from, until) the client is offline or gone, or kNever.
  double offline_between(std::uint32_t client, double from, double until);
  // The first time >= t at which some client without a task is registered and online, or
  // kNever: when the world next offers anyone to train. O(population).
  double next_available(double t);
  // The same among `clients` only (an edge's).
  double next_available(double t, const std::vector<std::uint32_t>& clients);
  // Whether anyone is ever available from t (next_available(t) < kNever), found without visiting
  // the population: the search starts at the last client found (which changes the
  // cost only, never the answer).
  bool anyone_available(double t);

  void set_busy(std::uint32_t client, bool busy);
  // Sync: a late client works on until its update arrives.
  void work_until(std::uint32_t client, double t);
  // Ascending: the clients not idle at t (busy, or still working).
  std::vector<std::uint32_t> not_idle(double t);
  // Who is busy and until when; availability and registration come back with the timeline.
  void archive(StateArchive& ar);

 private:
  double next_free(std::uint32_t client, double t, double best);
  const Population& population_;
  ClientAvailability availability_;
  Presence presence_;
  EdgeMembership edges_;
  std::vector<char> busy_;                         // has a task whose outcome is not applied yet
  std::set<std::uint32_t> busy_set_;               // the same clients, so listing them costs O(busy)
  std::vector<double> busy_until_;                 // by client
  std::map<std::uint32_t, double> working_until_;  // the clients whose busy_until_ may still be ahead
  std::uint32_t last_available_ = 0;               // where anyone_available starts looking
};

}  // namespace drift
