#pragma once
// When a task of one client starts, when its computation ends at the earliest, and whether and
// when it drops out: the client's profile (speed, bandwidths, latency) in virtual time.
#include <cstdint>
#include <map>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/population.hpp"

namespace drift {

struct TaskPlan {
  std::uint64_t job = 0;
  std::uint32_t client = 0;
  double start = 0.0;
  double download_end = 0.0;
  double compute_end = 0.0;
  double earliest_finish = 0.0;  // compute end + one latency; the upload adds bytes / bandwidth
  double drop_time = kNever;     // from the dropout probability (offline periods are checked later)
  double up_bandwidth = 1.0;
  std::uint64_t down_bytes = 0;
  std::uint64_t model_version = 0;
  double speed = 1.0;           // samples per second of this task's computation
  double latency = 0.0;         // seconds each way
  std::uint32_t max_steps = 0;  // simulation.partial_work: the steps that fit; 0 = the whole local work
  double finish(std::uint64_t upload_bytes) const {
    return earliest_finish + static_cast<double>(upload_bytes) / up_bandwidth;
  }
  // Every field, once: a checkpoint's layout of a plan (sim_archive.cpp) is this list, so a
  // field added above and not here is the one place to look, not a silent gap in a resume.
  template <class Visit>
  void each_field(Visit&& visit) {
    visit(job, client, start, download_end, compute_end, earliest_finish, drop_time, up_bandwidth, down_bytes,
          model_version, speed, latency, max_steps);
  }
};

// Virtual compute time a task spent before `until` (its end, by default): the one formula for
// the compute that late or dropped work wasted.
double wasted_compute(const TaskPlan& plan, double until = kNever);

class TaskPlanner {
 public:
  TaskPlanner(const Scenario& scenario, const Population& population);

  // Plans the next job (job ids count up from 0) of `client` starting at `start`; under
  // simulation.partial_work, cut to a sync round's deadline at `deadline_at`.
  TaskPlan plan(std::uint32_t client, double start, std::uint64_t down_bytes, std::uint64_t model_version,
                double deadline_at = kNever);
  // When the whole local work would arrive after `deadline_at` (its upload taken as
  // `upload_bytes`, the model's size), cuts it to the steps whose computation lets it arrive in
  // time, and moves its compute end. False when it fits whole, or when not one step fits.
  bool cut_to_deadline(TaskPlan& plan, double deadline_at, std::uint64_t upload_bytes) const;
  // simulation.stragglers: FedProx's systems heterogeneity. That share of the round's cohort,
  // drawn from the ("stragglers", round) stream, sets out to do fewer epochs (steps under
  // local_steps), uniform in 1..E; the plans of the round's tasks follow. An edge round draws
  // from ("stragglers", round, edge + 1): edges that share a round number draw apart.
  void draw_stragglers(std::uint32_t round, std::vector<std::uint32_t> cohort, std::uint32_t edge_tag = 0);
  // A timeline `speed` entry: the group computes `factor` times as fast from now on.
  void set_speed_factor(std::uint32_t group, double factor) { speed_factor_[group] = factor; }
  // The job counter; speed factors come back with the timeline.
  void archive(StateArchive& ar) { ar.value(next_job_); }

 private:
  const Scenario& scenario_;
  const Population& population_;
  // Its work cut to `steps`: the compute end moves.
  void set_steps(TaskPlan& plan, std::uint64_t steps) const;

  std::vector<double> speed_factor_;                        // per group
  std::map<std::uint32_t, std::uint64_t> straggler_steps_;  // this round's stragglers: client -> steps
  std::uint64_t next_job_ = 0;
};

}  // namespace drift
