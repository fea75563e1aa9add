#include "engine/sim/driver_timeline.hpp"

#include <utility>

namespace drift {

DriverTimeline::DriverTimeline(const Scenario& scenario, Roster& roster, TaskPlanner& planner)
    : roster_(roster),
      planner_(planner),
      world_(scenario, roster.population(), roster.availability(), roster.presence()),
      deadline_(scenario.simulation.deadline) {}

void DriverTimeline::apply_due(std::uint32_t round, double t) {
  for (const auto i : world_.take_due(round, t)) {
    apply(i, t);
    steps_.push_back({static_cast<std::uint32_t>(i), t});
  }
}

void DriverTimeline::apply(std::size_t i, double t) {
  world_.apply_to_world(i, t, roster_.availability(), roster_.presence(), roster_.edges());
  const auto& e = world_.entry(i);
  if (e.action == TimelineAction::speed) planner_.set_speed_factor(world_.group_of(i), e.value);
  if (e.action == TimelineAction::deadline) deadline_ = e.value;
  applied_.push_back({static_cast<std::uint32_t>(i), t});
}

void DriverTimeline::archive(StateArchive& ar) {
  ar.section("timeline");
  auto steps = [&](std::vector<TimelineStep>& v) {
    ar.vector(v, [&](TimelineStep& s) {
      ar.value(s.index);
      ar.value(s.time);
    });
  };
  auto applied = applied_;
  steps(applied);
  steps(steps_);
  if (!ar.loading()) return;
  applied_.clear();
  for (const auto& s : applied) {
    if (s.index >= world_.size()) throw DecodeError("a checkpoint names an unknown timeline entry");
    world_.mark_applied(s.index);
    apply(s.index, s.time);
  }
}

std::vector<TimelineStep> DriverTimeline::take_steps() { return std::exchange(steps_, {}); }

}  // namespace drift
