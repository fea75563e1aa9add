#pragma once
#include <caf/fwd.hpp>

#include <cstdint>
#include <memory>

#include "messages/state_store.hpp"

namespace drift::actors {

// One federated client, spawned the first time it is selected. Its private algorithm state
// waits in `states` between its rounds (memory or disk); a task becomes a training job.
caf::behavior client(caf::event_based_actor* self, std::uint32_t client_id, caf::actor pool,
                     std::shared_ptr<msg::StateStore> states);

}  // namespace drift::actors
