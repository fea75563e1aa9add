#pragma once
#include <caf/all.hpp>

#include <vector>

#include "actors/trainer_slot.hpp"
#include "engine/training/devices.hpp"

namespace drift::actors {

// Owns the trainer slots of every device and a FIFO of jobs. A job goes to an idle slot of
// the least-loaded device and is delegated to it, so the slot replies to the job's sender
// directly: results are keyed by CAF's request ids, not by the pool.
caf::behavior device_pool(caf::event_based_actor* self, std::vector<DeviceSlots> devices, SlotContext ctx);

}  // namespace drift::actors
