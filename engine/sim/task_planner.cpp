#include "engine/sim/task_planner.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"

namespace drift {

double wasted_compute(const TaskPlan& plan, double until) {
  return std::max(0.0, std::min(until, plan.compute_end) - plan.download_end);
}

TaskPlanner::TaskPlanner(const Scenario& scenario, const Population& population)
    : scenario_(scenario), population_(population), speed_factor_(population.group_names.size(), 1.0) {}

TaskPlan TaskPlanner::plan(std::uint32_t client, double start, std::uint64_t down_bytes, std::uint64_t model_version,
                           double deadline_at) {
  const auto& sys = population_.system[client];
  const auto g = population_.group[client];
  const double speed = sys.speed * (g == kNoGroup ? 1.0 : speed_factor_[g]);
  TaskPlan p;
  p.job = next_job_++;
  p.client = client;
  p.start = start;
  p.down_bytes = down_bytes;
  p.model_version = model_version;
  p.up_bandwidth = sys.up_bandwidth;
  p.download_end = start + sys.latency + static_cast<double>(down_bytes) / sys.down_bandwidth;
  const double samples = local_samples_per_round(scenario_.training, population_.num_samples[client]);
  p.speed = speed;
  p.latency = sys.latency;
  p.compute_end = p.download_end + samples / speed;
  p.earliest_finish = p.compute_end + sys.latency;
  if (const auto it = straggler_steps_.find(client); it != straggler_steps_.end()) set_steps(p, it->second);
  if (scenario_.simulation.dropout > 0.0) {
    Rng rng = make_stream(scenario_.seed, "dropout", {p.job});
    if (rng.uniform() < scenario_.simulation.dropout) p.drop_time = start + rng.uniform() * (p.earliest_finish - start);
  }
  // A dropout's time is drawn over the work the client set out to do, before a deadline's cut.
  if (scenario_.simulation.partial_work && deadline_at < kNever) cut_to_deadline(p, deadline_at, down_bytes);
  return p;
}

bool TaskPlanner::cut_to_deadline(TaskPlan& plan, double deadline_at, std::uint64_t upload_bytes) const {
  if (plan.finish(upload_bytes) <= deadline_at) return false;
  const double compute_seconds =
      deadline_at - plan.latency - static_cast<double>(upload_bytes) / plan.up_bandwidth - plan.download_end;
  if (!(compute_seconds > 0.0)) return false;
  const auto& h = scenario_.training;
  const auto n = population_.num_samples[plan.client];
  const auto steps = steps_within(h, n, compute_seconds * plan.speed);
  const auto whole = plan.max_steps > 0 ? plan.max_steps : steps_per_round(h, n);
  if (steps == 0 || steps >= whole) return false;
  set_steps(plan, steps);
  return true;
}

void TaskPlanner::set_steps(TaskPlan& plan, std::uint64_t steps) const {
  if (steps > kMaxStepCut)
    throw UserError("client " + std::to_string(plan.client) + " would stop after " + std::to_string(steps) +
                    " steps, more than the " + std::to_string(kMaxStepCut) +
                    " a task can carry (simulation.partial_work, simulation.stragglers); use fewer local steps a "
                    "round");
  const auto& h = scenario_.training;
  const auto n = population_.num_samples[plan.client];
  plan.max_steps = static_cast<std::uint32_t>(steps);
  plan.compute_end = plan.download_end + samples_in_steps(h, n, steps) / plan.speed;
  plan.earliest_finish = plan.compute_end + plan.latency;
}

void TaskPlanner::draw_stragglers(std::uint32_t round, std::vector<std::uint32_t> cohort, std::uint32_t edge_tag) {
  straggler_steps_.clear();
  const double share = scenario_.simulation.stragglers;
  if (share <= 0.0 || cohort.empty()) return;
  const auto& h = scenario_.training;
  Rng rng = edge_tag == 0 ? make_stream(scenario_.seed, "stragglers", {round})
                          : make_stream(scenario_.seed, "stragglers", {round, edge_tag});
  rng.shuffle(cohort);
  const auto count = static_cast<std::size_t>(std::llround(share * static_cast<double>(cohort.size())));
  for (std::size_t i = 0; i < count && i < cohort.size(); ++i) {
    const auto c = cohort[i];
    const auto n = population_.num_samples[c];
    const auto whole = steps_per_round(h, n);
    // Epochs (or, under local_steps, steps) uniform in 1..E: FedProx's paper.
    const std::uint32_t units = h.local_steps > 0 ? h.local_steps : h.local_epochs;
    const auto drawn = 1 + static_cast<std::uint64_t>(rng.uniform() * units);
    const auto steps = h.local_steps > 0 ? drawn : drawn * steps_per_epoch(h, n);
    if (steps > 0 && steps < whole) straggler_steps_[c] = steps;
  }
}

}  // namespace drift
