#pragma once
#include <caf/fwd.hpp>

#include <memory>
#include <vector>

#include "actors/metrics_sink.hpp"
#include "actors/protocols.hpp"
#include "actors/trainer_slot.hpp"
#include "engine/training/devices.hpp"

namespace drift::actors {

// Owns the trainer slots of every device, local and remote, and a FIFO of jobs. A job goes to
// an idle slot of the least-loaded device; a worker process joins as one more device whose
// slots live across the network. Jobs wait here, never at a worker, so a lost worker loses
// only the jobs it was running: those fail with PoolError::worker_lost, the rest go on
// elsewhere. When no slot remains, every job fails with PoolError::no_slots.
//
// Its interface is `pool_actor` (actors/protocols.hpp): jobs as a trainer slot takes them,
// workers handed over by the gatekeeper (the pool monitors each agent), `await` (replies once
// at least n workers are live) and `release` (replies once every worker acknowledged the end of
// the run, or after 10 s).
pool_actor::behavior_type device_pool(pool_actor::pointer self, std::vector<DeviceSlots> local, SlotContext ctx,
                                      std::shared_ptr<RunObserver> observer);

}  // namespace drift::actors
