#include "actors/client.hpp"

#include "actors/wire.hpp"
#include "messages/codec.hpp"

namespace drift::actors {

caf::behavior client(caf::event_based_actor* self, std::uint32_t client_id, caf::actor pool,
                     std::shared_ptr<msg::StateStore> states) {
  return {
      [=](task_atom, const Buffer& task) {
        auto promise = self->make_response_promise();
        Buffer state;
        try {
          auto kept = states->load(client_id);
          state = kept ? *kept : msg::encode_client_state({client_id, {}});
        } catch (const std::exception& e) {
          promise.deliver(caf::make_error(caf::sec::runtime_error, std::string(e.what())));
          return;
        }
        self->request(pool, caf::infinite, train_atom::value, state, task)
            .then(
                [=](const Buffer& update, const Buffer& new_state) mutable {
                  std::string failure;
                  try {
                    states->save(client_id, new_state);
                  } catch (const std::exception& e) {
                    failure = e.what();
                  }
                  if (failure.empty()) promise.deliver(update);
                  else promise.deliver(caf::make_error(caf::sec::runtime_error, failure));
                },
                [=](caf::error& err) mutable { promise.deliver(std::move(err)); });
      },
  };
}

}  // namespace drift::actors
