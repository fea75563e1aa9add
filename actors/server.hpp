#pragma once
#include <caf/all.hpp>

#include <memory>

#include "actors/trainer_slot.hpp"

namespace drift::actors {

struct ServerPeers {
  caf::actor sampler;
  caf::actor pool;
  caf::actor sink;
};

// Owns the global model and the algorithm's server half, and drives synchronous rounds:
// select -> broadcast one task buffer -> collect updates -> aggregate in client-id order
// -> evaluate on the pool -> report. Replies to `run` when the last round is written.
caf::behavior server(caf::event_based_actor* self, SlotContext ctx, ServerPeers peers);

}  // namespace drift::actors
