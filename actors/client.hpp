#pragma once
#include <caf/all.hpp>

#include <cstdint>

namespace drift::actors {

// One federated client, spawned the first time it is selected. It keeps the client's
// private algorithm state between its rounds and turns a task into a training job.
caf::behavior client(caf::event_based_actor* self, std::uint32_t client_id, caf::actor pool);

}  // namespace drift::actors
