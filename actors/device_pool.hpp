#pragma once
#include <caf/fwd.hpp>

#include <memory>
#include <vector>

#include "actors/metrics_sink.hpp"
#include "actors/trainer_slot.hpp"
#include "engine/training/devices.hpp"

namespace drift::actors {

// Owns the trainer slots of every device, local and remote, and a FIFO of jobs. A job goes to
// an idle slot of the least-loaded device; a worker process joins as one more device whose
// slots live across the network. Jobs wait here, never at a worker, so a lost worker loses
// only the jobs it was running: those fail with PoolError::worker_lost, the rest go on
// elsewhere. When no slot remains, every job fails with PoolError::no_slots.
//
//   train_atom, state, task      -> update, new state
//   eval_atom, job, weights      -> result
//   worker_atom, name, agent, slots: adds a worker's slots (the pool monitors its agent)
//   await_atom, n                -> workers live, once at least n are (joined and not lost)
//   release_atom                 -> workers told, once each acknowledged the end of the run (or 10 s)
caf::behavior device_pool(caf::event_based_actor* self, std::vector<DeviceSlots> local, SlotContext ctx,
                          std::shared_ptr<RunObserver> observer);

}  // namespace drift::actors
