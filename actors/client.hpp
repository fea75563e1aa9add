#pragma once
#include <caf/fwd.hpp>

#include <cstdint>
#include <memory>

#include "actors/protocols.hpp"
#include "messages/state_store.hpp"

namespace drift::actors {

// One federated client, spawned the first time it is selected. Its private algorithm state
// waits in `states` between its rounds (memory or disk); a task becomes a training job.
client_actor::behavior_type client(client_actor::pointer self, std::uint32_t client_id, job_runner_actor pool,
                                   std::shared_ptr<msg::StateStore> states);

}  // namespace drift::actors
