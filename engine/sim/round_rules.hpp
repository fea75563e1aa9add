#pragma once
// The rules both round drivers follow, each in one place: what became of a job, what a
// training task holds, when the run stops and when the global model is evaluated.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/sim/driver.hpp"
#include "engine/sim/roster.hpp"
#include "engine/sim/task_planner.hpp"

namespace drift {

enum class Fate { lost, failed, dropped, arrived };

struct Triage {
  Fate fate = Fate::arrived;
  double time = 0.0;   // when the outcome takes effect in virtual time
  std::string reason;  // lost, failed: the job's error; dropped: "dropped out" or "went offline"
};

// A launched job's outcome: its worker was lost (a dropout to the federation) or it failed,
// both at the job's earliest finish; or its client dropped out or went offline before the
// upload completed; or its update arrived.
Triage triage(const TaskPlan& plan, const JobOutcome& outcome, Roster& roster);
// Triage's time alone, without building its reason: the async driver asks it for every job in
// flight at every event.
double outcome_time(const TaskPlan& plan, const JobOutcome& outcome, Roster& roster);

// What becomes of a sync task when its round launches. Work that can never be used is not
// trained: a client offline (`offline`: when it next goes offline) or dropping out before its
// earliest finish is dropped then; one certain to miss the deadline (at `deadline_at`) is late
// untrained when late updates are discarded, unless simulation.train_doomed asks to measure it.
struct LaunchDecision {
  enum Kind { train, drop, late } kind = train;
  double at = 0.0;  // drop, late: when the server learns of it
  std::string why;
};
LaunchDecision decide_launch(const TaskPlan& plan, double now, double offline, double deadline_at,
                             const SimulationConfig& simulation);

// The task of `round` from model `version`, with the learning rate decayed to the round.
std::shared_ptr<TrainingTask> make_task(const Scenario& scenario, std::uint32_t round, std::uint64_t version,
                                        NamedTensors weights, Payload payload);

// After `aggregations`, at virtual time `now`: the rounds are done or the time budget is spent.
bool stop_reached(const Scenario& scenario, std::uint32_t aggregations, double now);

// Aggregation number `aggregation` is evaluated every evaluation.every and at the last.
bool evaluation_due(const Scenario& scenario, std::uint32_t aggregation, bool last);

// Aggregation `aggregation` also scores every client's held-out split (evaluation.per_client):
// every per_client-th evaluation, and the last of federation.rounds.
bool per_client_due(const Scenario& scenario, std::uint32_t aggregation);

// What the server half learns of a sync aggregation's `accepted` updates beside them: each
// one's staleness against model `version` and the version it pulled.
AggregationInput aggregation_input(std::uint32_t round, std::uint64_t version,
                                   const std::vector<ClientUpdate>& accepted);

// Jobs as (job id, client), in job order.
using JobLaunches = std::vector<std::pair<std::uint64_t, std::uint32_t>>;
// Jobs whose tasks differ from the round's in the same way: the model they start from (null:
// the global one; FedAWE keeps one per client) and their step cut (0: the whole local work).
struct JobGroup {
  const NamedTensors* start = nullptr;
  std::uint32_t max_steps = 0;
  JobLaunches jobs;
};
// The jobs grouped by `key` (its start and max_steps), groups in the order their first job
// comes, jobs in job order within each.
std::vector<JobGroup> group_jobs(const JobLaunches& jobs,
                                 const std::function<JobGroup(std::uint64_t job, std::uint32_t client)>& key);
// The task of a group's jobs: the round's own, or a copy with the group's start model and cut.
std::shared_ptr<TrainingTask> task_of_group(const JobGroup& group, const std::shared_ptr<TrainingTask>& round_task);

// simulation.partial_work (else nothing): how many `aggregated` updates were cut short of
// their whole local work, and each one's steps, ascending, in the report.
void report_partial_work(RoundReport& report, const std::vector<ClientUpdate>& aggregated, const Scenario& scenario);

// Why a sync run ends at `round`: nobody can take part from then on.
std::string nobody_can_take_part(std::uint32_t round, double now);
// Why a synchronous cloud ends: no edge is online, or ever will be (EdgeTier::edges_gone).
std::string no_edge_can_take_part(std::uint32_t round, double now);

// devices.pack: the round's jobs in consecutive packs of `pack`, as [begin, end) ranges; a range
// of one (a lone last job, or pack = 1) trains on its own, as it would unpacked.
std::vector<std::pair<std::size_t, std::size_t>> pack_ranges(std::size_t jobs, std::size_t pack);

}  // namespace drift
