#pragma once
// The asynchronous driver's jobs in flight: when each takes effect, which comes first, how
// soon a running one could, and how they are kept in a checkpoint.
#include <cstdint>
#include <map>
#include <memory>

#include "engine/core/state_archive.hpp"
#include "engine/sim/driver.hpp"
#include "engine/sim/roster.hpp"
#include "engine/sim/task_planner.hpp"

namespace drift {

struct InFlight {
  TaskPlan plan;
  bool launched = false;
  bool answered = false;
  JobOutcome outcome;
  std::shared_ptr<const NamedTensors> pulled;  // the model the client started from
};

using InFlightJobs = std::map<std::uint64_t, InFlight>;  // by job id

struct NextEvent {
  bool found = false;
  std::uint64_t job = 0;
  double time = 0.0;
  std::uint32_t client = 0;
};

// The known event that comes first, by (time, client): a job that was never launched (it drops
// or goes offline) or one that answered.
NextEvent earliest_event(const InFlightJobs& jobs, Roster& roster);
// The earliest moment a running job could still take effect (kNever if none runs), and its
// client: its earliest finish, or sooner if it drops out or its client goes offline before
// then (the timeline can take a client offline after its job started).
double running_bound(const InFlightJobs& jobs, Roster& roster, std::uint32_t& client);
bool all_answered(const InFlightJobs& jobs);
// Every job with its plan and outcome; the models they pulled, once per version. Refuses to
// save a job that is still running.
void archive_jobs(StateArchive& ar, InFlightJobs& jobs);

}  // namespace drift
