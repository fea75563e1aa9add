#pragma once
// What both round drivers are made of: the scenario, the host, and the collaborators that keep
// the simulated world's state. Each driver holds one and adds its own rules of a round.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/sim/accounting.hpp"
#include "engine/sim/driver.hpp"
#include "engine/sim/driver_timeline.hpp"
#include "engine/sim/privacy_book.hpp"
#include "engine/sim/roster.hpp"
#include "engine/sim/task_planner.hpp"

namespace drift {

struct DriverParts {
  DriverParts(const DriverSetup& setup, JobRunner& host_runner, DriverListener& host_listener);
  DriverParts(const DriverParts&) = delete;  // the timeline refers to roster and planner
  DriverParts& operator=(const DriverParts&) = delete;

  // A request for the sampler at virtual time t, with what it has not heard yet: who is busy,
  // the losses reported and the timeline entries applied since the last request.
  SelectionRequest selection_request(std::uint32_t round, double t);
  // Non-empty (the reason) when privacy.target_epsilon leaves no room for another aggregation.
  std::string privacy_budget_spent() const { return privacy ? privacy->budget_spent() : ""; }
  // The world's replica, the job counter, the accounting and the unsent losses.
  void archive(StateArchive& ar);

  const Scenario& scenario;
  std::shared_ptr<const Population> population;
  JobRunner& runner;
  DriverListener& listener;
  Roster roster;
  TaskPlanner planner;
  DriverTimeline timeline;
  Accounting accounting;
  std::unique_ptr<PrivacyBook> privacy;  // [privacy] runs only
  std::vector<ClientLoss> losses;        // training losses not yet sent to the sampler
};

}  // namespace drift
