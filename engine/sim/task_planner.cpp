#include "engine/sim/task_planner.hpp"

#include <algorithm>

#include "engine/core/rng.hpp"

namespace drift {

double wasted_compute(const TaskPlan& plan, double until) {
  return std::max(0.0, std::min(until, plan.compute_end) - plan.download_end);
}

TaskPlanner::TaskPlanner(const Scenario& scenario, const Population& population)
    : scenario_(scenario), population_(population), speed_factor_(population.group_names.size(), 1.0) {}

TaskPlan TaskPlanner::plan(std::uint32_t client, double start, std::uint64_t down_bytes, std::uint64_t model_version) {
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
  p.compute_end = p.download_end + samples / speed;
  p.earliest_finish = p.compute_end + sys.latency;
  if (scenario_.simulation.dropout > 0.0) {
    Rng rng = make_stream(scenario_.seed, "dropout", {p.job});
    if (rng.uniform() < scenario_.simulation.dropout) p.drop_time = start + rng.uniform() * (p.earliest_finish - start);
  }
  return p;
}

}  // namespace drift
