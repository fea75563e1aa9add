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

std::vector<std::pair<std::size_t, std::size_t>> pack_ranges(std::size_t jobs, std::size_t pack) {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  const std::size_t step = std::max<std::size_t>(pack, 1);
  for (std::size_t i = 0; i < jobs; i += step) ranges.emplace_back(i, std::min(jobs, i + step));
  return ranges;
}

}  // namespace drift
