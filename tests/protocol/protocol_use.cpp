// Compiled three ways by tests/protocol_check.sh: as is, the messages drift's actors exchange
// type-check against their interfaces (actors/protocols.hpp); with DRIFT_MISUSE set, one
// mistake each, which the compiler must refuse.
#include <caf/all.hpp>

#include "actors/wire.hpp"

using namespace drift::actors;

void talk(caf::event_based_actor* self, const slot_actor& slot, const client_actor& client, const pool_actor& pool) {
#if DRIFT_MISUSE == 1
  // A task is a client's message; a trainer slot does not take it.
  self->request(slot, caf::infinite, task_atom::value, Buffer{});
#elif DRIFT_MISUSE == 2
  // An evaluation answers with one buffer, not an update and a state.
  self->request(pool, caf::infinite, eval_atom::value, Buffer{}, Buffer{}).then([](Buffer&, Buffer&) {});
#elif DRIFT_MISUSE == 3
  // The gatekeeper's view of the pool cannot submit jobs.
  worker_registry_actor registry = pool;
  self->request(registry, caf::infinite, train_atom::value, Buffer{}, Buffer{});
#else
  self->request(slot, caf::infinite, train_atom::value, Buffer{}, Buffer{}).then([](Buffer&, Buffer&) {});
  self->request(pool, caf::infinite, eval_atom::value, Buffer{}, Buffer{}).then([](Buffer&) {});
  self->request(client, caf::infinite, task_atom::value, Buffer{}).then([](Buffer&) {});
  worker_registry_actor registry = pool;
  self->send(registry, worker_atom::value, std::string("w"), caf::actor{}, std::vector<slot_actor>{slot});
#endif
}
