#pragma once
// The timeline as a round driver applies it. The driver decides when entries apply: at the
// start of a round, or when virtual time reaches them. An entry changes the driver's replica of
// the world (availability, registration), task speeds or the deadline, and is queued for the
// sampler, whose replica changes at the same virtual time.
#include <cstdint>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/population/world_timeline.hpp"
#include "engine/sampling/cohort_sampler.hpp"
#include "engine/sim/roster.hpp"
#include "engine/sim/task_planner.hpp"

namespace drift {

class DriverTimeline {
 public:
  DriverTimeline(const Scenario& scenario, Roster& roster, TaskPlanner& planner);

  // Applies the entries due at the start of `round` or at a time <= t.
  void apply_due(std::uint32_t round, double t);
  double next_timed_entry() const { return world_.next_timed_entry(); }
  bool any_pending() const { return world_.any_pending(); }
  double deadline() const { return deadline_; }  // sync: virtual seconds per round; 0 = none
  // The entries applied since the last call, for the next SelectionRequest.
  std::vector<TimelineStep> take_steps();
  // Saves the steps applied so far, or restores them by applying each again in order.
  void archive(StateArchive& ar);

 private:
  Roster& roster_;
  TaskPlanner& planner_;
  WorldTimeline world_;
  double deadline_;
  void apply(std::size_t index, double t);
  std::vector<TimelineStep> steps_;    // not yet sent to the sampler
  std::vector<TimelineStep> applied_;  // every step so far, in order
};

}  // namespace drift
