#pragma once
// A sync round's replay in virtual time, once all of its jobs have answered: which dropped,
// failed or arrived, and which arrivals the round accepts. One round at a time: a wave's rounds
// (several edges' under [hierarchy]) run side by side and are replayed in order.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/sim/driver_parts.hpp"
#include "engine/sim/personal_evaluations.hpp"
#include "engine/sim/round_tier.hpp"
#include "engine/sim/sync_jobs.hpp"

namespace drift {

// One round in flight: which it is, its jobs, what it aggregates at most.
struct RoundRun {
  TierRound round;
  std::map<std::uint64_t, Pending> jobs;  // by job id
  std::uint32_t needed = 0;               // the updates it aggregates at most
  std::uint64_t version = 0;              // the model version its task carries: its updates' staleness is 0
  double planned_events_end = 0.0;        // the latest drop or late decided when it launched
  double protocol_start = 0.0;            // when its accepted clients had trained
};

// The round being closed while its aggregation is asked: what it accepted, when it ends,
// and whose updates go in (when there are enough of them).
struct ClosingRun {
  std::vector<ClientUpdate> accepted;
  double end = 0.0;
  bool enough = false;
  std::vector<std::uint32_t> aggregated;
};

// A client that drops out at `at`, having set out on `plan`.
void record_drop(RoundReport& report, std::uint32_t client, double at, const TaskPlan& plan, const std::string& why);

// Whether client `plan.client` of `run` trains: a drop or a certain late (decide_launch) is
// recorded at once, and `run.planned_events_end` grows to when the server learns of it.
bool launch_decided(RoundRun& run, const TaskPlan& plan, double deadline_at, DriverParts& parts, RoundReport& report);

// Every answered job of `run` in job order: drops, failures and the updates that arrived, by
// time. Frees the clients in the roster; records private models' changes in `personal` (null
// without private models). `last_event` grows to the latest drop or failure.
std::vector<Arrival> sort_out_jobs(RoundRun& run, DriverParts& parts, PersonalEvaluations* personal,
                                   RoundReport& report, double& last_event);

// The first `run.needed` arrivals before the deadline are accepted; the rest are late (kept as
// stale in `newly_late` under late_updates = "stale"). Returns when the round ends.
double accept_arrivals(RoundRun& run, std::vector<Arrival>& arrivals, double last_event, DriverParts& parts,
                       RoundReport& report, std::vector<ClientUpdate>& accepted, std::vector<StaleUpdate>& newly_late);

// Client records kept across a checkpoint (fedbuff: those after the last cloud step).
void archive_records(StateArchive& ar, std::vector<ClientRecord>& records);
// fedbuff: an edge may run rounds past the cloud step that closes `report` at `end`; what its
// clients did after the step is taken out of it, for the next report.
std::vector<ClientRecord> take_records_after(RoundReport& report, double end);

}  // namespace drift
