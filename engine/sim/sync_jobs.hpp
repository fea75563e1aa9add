#pragma once
// What the sync driver keeps about a round's jobs while it waits for them, and the order in
// which it replays their arrivals.
#include <cstdint>

#include "engine/sim/driver.hpp"
#include "engine/sim/task_planner.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

struct Pending {
  TaskPlan plan;
  bool answered = false;
  JobOutcome outcome;
};

// An update that missed its round's deadline, kept for the first aggregation after it arrives.
struct StaleUpdate {
  double arrival;
  ClientUpdate update;
  std::uint64_t bytes;
};

struct Arrival {
  double time;
  std::uint32_t client;
  Pending* job;
};

}  // namespace drift
