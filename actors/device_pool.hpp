#pragma once
#include <caf/all.hpp>

#include "actors/trainer_slot.hpp"

namespace drift::actors {

// Owns N trainer slots and a FIFO of jobs. A job is delegated to a free slot, which replies
// to the job's sender directly, so results are keyed by CAF's request ids, not by the pool.
caf::behavior device_pool(caf::event_based_actor* self, std::uint32_t slots, SlotContext ctx);

}  // namespace drift::actors
