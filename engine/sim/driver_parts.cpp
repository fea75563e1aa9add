#include "engine/sim/driver_parts.hpp"

#include <utility>

namespace drift {

DriverParts::DriverParts(const DriverSetup& setup, JobRunner& host_runner, DriverListener& host_listener)
    : scenario(*setup.scenario),
      population(setup.population),
      runner(host_runner),
      listener(host_listener),
      roster(scenario, *population),
      planner(scenario, *population),
      timeline(scenario, roster, planner),
      accounting(scenario, *population, setup.log_eligible),
      privacy(scenario.privacy.mode == PrivacyMode::none ? nullptr : std::make_unique<PrivacyBook>(scenario)) {}

SelectionRequest DriverParts::selection_request(std::uint32_t round, double t) {
  SelectionRequest request;
  request.round = round;
  request.time = t;
  request.busy = roster.not_idle(t);
  request.losses = std::exchange(losses, {});
  request.timeline = timeline.take_steps();
  return request;
}

void DriverParts::archive(StateArchive& ar) {
  timeline.archive(ar);  // first: its replay rebuilds availability, registration and speeds
  roster.archive(ar);
  planner.archive(ar);
  accounting.archive(ar);
  if (privacy) privacy->archive(ar);
  ar.vector(losses, [&](ClientLoss& l) {
    ar.value(l.client);
    ar.value(l.loss);
  });
}

}  // namespace drift
