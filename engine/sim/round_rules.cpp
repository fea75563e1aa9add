#include "engine/sim/round_rules.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace drift {

double outcome_time(const TaskPlan& plan, const JobOutcome& outcome, Roster& roster) {
  if (!outcome.ok) return plan.earliest_finish;
  const double finish = plan.finish(outcome.upload_bytes);
  return std::min({finish, plan.drop_time, roster.offline_between(plan.client, plan.start, finish)});
}

Triage triage(const TaskPlan& plan, const JobOutcome& outcome, Roster& roster) {
  const double t = outcome_time(plan, outcome, roster);
  if (!outcome.ok) return {outcome.lost ? Fate::lost : Fate::failed, t, outcome.error};
  if (t < plan.finish(outcome.upload_bytes))
    return {Fate::dropped, t, t == plan.drop_time ? "dropped out" : "went offline"};
  return {Fate::arrived, t, ""};
}

std::shared_ptr<TrainingTask> make_task(const Scenario& scenario, std::uint32_t round, std::uint64_t version,
                                        NamedTensors weights, Payload payload) {
  auto task = std::make_shared<TrainingTask>();
  task->round = round;
  task->model_version = version;
  task->weights = std::move(weights);
  task->payload = std::move(payload);
  task->hyper = scenario.training;
  task->hyper.learning_rate = learning_rate_of_round(scenario.training, round);
  return task;
}

bool stop_reached(const Scenario& scenario, std::uint32_t aggregations, double now) {
  return aggregations >= scenario.rounds ||
         (scenario.simulation.max_virtual_time > 0 && now >= scenario.simulation.max_virtual_time);
}

bool evaluation_due(const Scenario& scenario, std::uint32_t aggregation, bool last) {
  return last || aggregation % static_cast<std::uint32_t>(scenario.evaluation.every) == 0;
}

bool per_client_due(const Scenario& scenario, std::uint32_t aggregation) {
  const auto k = static_cast<std::uint64_t>(scenario.evaluation.per_client);
  if (k == 0) return false;
  const auto period = k * static_cast<std::uint64_t>(scenario.evaluation.every);
  return aggregation % period == 0 || aggregation == scenario.rounds;
}

LaunchDecision decide_launch(const TaskPlan& plan, double now, double offline, double deadline_at,
                             const SimulationConfig& simulation) {
  if (offline < plan.earliest_finish || plan.drop_time < plan.earliest_finish)
    return {LaunchDecision::drop, std::min(offline, plan.drop_time),
            offline <= now             ? "offline when selected"
            : offline < plan.drop_time ? "went offline"
                                       : "dropped out"};
  if (plan.earliest_finish > deadline_at && simulation.late_updates == LateUpdates::discard && !simulation.train_doomed)
    return {LaunchDecision::late, plan.earliest_finish, "certain to miss the deadline: not trained"};
  return {};
}

AggregationInput aggregation_input(std::uint32_t round, std::uint64_t version,
                                   const std::vector<ClientUpdate>& accepted) {
  AggregationInput input;
  input.round = round;
  for (const auto& u : accepted) {
    input.staleness.push_back(version - u.model_version);
    input.pulled_version.push_back(u.model_version);
  }
  return input;
}

std::vector<JobGroup> group_jobs(const JobLaunches& jobs,
                                 const std::function<JobGroup(std::uint64_t job, std::uint32_t client)>& key) {
  std::vector<JobGroup> groups;
  for (const auto& job : jobs) {
    auto k = key(job.first, job.second);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const JobGroup& g) { return g.start == k.start && g.max_steps == k.max_steps; });
    if (it == groups.end()) it = groups.insert(groups.end(), std::move(k));
    it->jobs.push_back(job);
  }
  return groups;
}

std::shared_ptr<TrainingTask> task_of_group(const JobGroup& group, const std::shared_ptr<TrainingTask>& round_task) {
  if (group.start == nullptr && group.max_steps == 0) return round_task;
  auto own = std::make_shared<TrainingTask>(*round_task);
  if (group.start != nullptr) own->weights = *group.start;
  own->hyper.max_steps = group.max_steps;
  return own;
}

void report_partial_work(RoundReport& report, const std::vector<ClientUpdate>& aggregated, const Scenario& scenario) {
  if (!scenario.simulation.partial_work) return;
  report.partial = std::max<std::int64_t>(report.partial, 0);  // edge rounds add up within a cloud round
  for (const auto& u : aggregated) {
    report.update_steps.push_back(u.metrics.steps);
    if (u.metrics.steps < steps_per_round(scenario.training, u.num_samples)) ++report.partial;
  }
  std::sort(report.update_steps.begin(), report.update_steps.end());
}

std::string nobody_can_take_part(std::uint32_t round, double now) {
  return "no client can take part from round " + std::to_string(round) + " on (virtual time " + std::to_string(now) +
         " s): none is online or will come online again, and no timeline entry is left";
}

std::string no_edge_can_take_part(std::uint32_t round, double now) {
  return "no edge can take part from cloud round " + std::to_string(round) + " on (virtual time " +
         std::to_string(now) + " s): each is offline and none will come online again";
}

std::vector<std::pair<std::size_t, std::size_t>> pack_ranges(std::size_t jobs, std::size_t pack) {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  const std::size_t step = std::max<std::size_t>(pack, 1);
  for (std::size_t i = 0; i < jobs; i += step) ranges.emplace_back(i, std::min(jobs, i + step));
  return ranges;
}

}  // namespace drift
