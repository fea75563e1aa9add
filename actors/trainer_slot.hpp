#pragma once
#include <caf/fwd.hpp>

#include <atomic>
#include <memory>

#include "actors/protocols.hpp"
#include "engine/compose/federation_data.hpp"
#include "engine/config/scenario.hpp"
#include "engine/population/population.hpp"

namespace drift::actors {

// What every trainer slot of a process shares, read-only.
struct SlotContext {
  std::shared_ptr<const Scenario> scenario;
  std::shared_ptr<const FederationData> data;
  std::shared_ptr<const Population> population;  // used by the server's driver
  // Fault injection for the worker-loss tests (`drift worker --crash-after-jobs N`): the
  // process kills itself with SIGKILL when the N-th training job arrives. Null otherwise.
  std::shared_ptr<std::atomic<std::int64_t>> crash_countdown;
};

// A detached actor (its own thread, one intra-op torch thread) that runs training and
// evaluation jobs for whoever asks: the device pool of its process, or a coordinator's pool
// across the network. Models and batches move to `device`; updates and results come back on
// the CPU. A job that throws (out of memory, NaN, a bad message) fails alone.
slot_actor::behavior_type trainer_slot(slot_actor::pointer self, torch::Device device, SlotContext ctx);

}  // namespace drift::actors
