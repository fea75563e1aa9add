#include "actors/client.hpp"

#include "actors/wire.hpp"
#include "messages/codec.hpp"

namespace drift::actors {

caf::behavior client(caf::event_based_actor* self, std::uint32_t client_id, caf::actor pool) {
  auto private_state = std::make_shared<Buffer>(msg::encode_client_state({client_id, {}}));
  return {
      [=](task_atom, const Buffer& task) {
        auto promise = self->make_response_promise();
        self->request(pool, caf::infinite, train_atom::value, *private_state, task)
            .then(
                [=](const Buffer& update, const Buffer& new_state) mutable {
                  *private_state = new_state;
                  promise.deliver(update);
                },
                [=](caf::error& err) mutable { promise.deliver(std::move(err)); });
      },
  };
}

}  // namespace drift::actors
