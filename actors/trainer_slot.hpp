#pragma once
#include <caf/all.hpp>

#include <memory>

#include "engine/scenario/scenario.hpp"
#include "engine/sim/population.hpp"
#include "engine/training/federation_data.hpp"

namespace drift::actors {

// What every trainer slot of a process shares, read-only.
struct SlotContext {
  std::shared_ptr<const Scenario> scenario;
  std::shared_ptr<const FederationData> data;
  std::shared_ptr<const Population> population;  // used by the server's driver
};

// A detached actor (its own thread, one intra-op torch thread) that runs training and
// evaluation jobs. It tells `pool` when it is free again; replies go straight to whoever
// asked, because the pool delegates jobs to it.
// Models and batches move to `device`; updates and results come back on the CPU.
caf::behavior trainer_slot(caf::event_based_actor* self, caf::actor pool, std::uint32_t slot_id, torch::Device device,
                           SlotContext ctx);

}  // namespace drift::actors
