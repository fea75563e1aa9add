#pragma once
// What `drift validate` says about virtual time before anything runs: how long a client's task
// takes (download, local epochs at its speed, upload, latencies, as the task planner computes
// them) and so about how long a round or aggregation lasts, and whether the run spans enough
// virtual time for availability to change at all.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/population/population.hpp"

namespace drift {

struct RoundEstimate {
  double task_median = 0.0, task_max = 0.0;  // virtual seconds, over the clients
  double round = 0.0;                        // a sync round, or an async aggregation
  double run = 0.0;                          // all rounds (or the virtual-time limit)
  double edge_loop = 0.0;                    // [hierarchy]: an edge's edge rounds and its link both ways
  std::string basis;                         // how `round` was estimated
};

// `model_bytes`: the size of a task (download) and of an update (upload).
RoundEstimate estimate_rounds(const Scenario& scenario, const Population& population, std::uint64_t model_bytes);

// Warnings about virtual time: a run far shorter than the availability cycle it studies (data
// caps such as data.max_train_samples shrink every task and so compress virtual time); under
// [hierarchy], edge loops longer than the cloud's deadline or than an edge's online stretches,
// which lose most edge models (and may keep a buffered cloud from ever stepping).
std::vector<std::string> virtual_time_warnings(const Scenario& scenario, const RoundEstimate& estimate);
// ... of which those about edge loops (`drift run` says them too: such a run may never end).
std::vector<std::string> edge_loop_warnings(const Scenario& scenario, const RoundEstimate& estimate);

}  // namespace drift
