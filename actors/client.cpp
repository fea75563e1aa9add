#include "actors/client.hpp"

#include "actors/wire.hpp"
#include "messages/codec.hpp"

namespace drift::actors {
namespace {

// Trains one task from the client's stored state; `keep` saves the state it ends with (a
// shadow task, a counterfactual, leaves the client as it was).
caf::result<Buffer> train(client_actor::pointer self, std::uint32_t client_id, const job_runner_actor& pool,
                          const std::shared_ptr<msg::StateStore>& states, const Buffer& task, bool keep) {
  Buffer state;
  try {
    auto kept = states->load(client_id);
    state = kept ? *kept : msg::encode_client_state({client_id, {}});
  } catch (const std::exception& e) {
    return caf::make_error(caf::sec::runtime_error, std::string(e.what()));
  }
  auto promise = self->make_response_promise<Buffer>();
  self->request(pool, caf::infinite, train_atom::value, state, task)
      .then(
          [=](Buffer& update, Buffer& new_state) mutable {
            std::string failure;
            try {
              if (keep) states->save(client_id, new_state);
            } catch (const std::exception& e) {
              failure = e.what();
            }
            if (failure.empty())
              promise.deliver(update);
            else
              promise.deliver(caf::make_error(caf::sec::runtime_error, failure));
          },
          [=](caf::error& err) mutable { promise.deliver(std::move(err)); });
  return promise;
}

}  // namespace

client_actor::behavior_type client(client_actor::pointer self, std::uint32_t client_id, job_runner_actor pool,
                                   std::shared_ptr<msg::StateStore> states) {
  return {
      [=](task_atom, const Buffer& task) { return train(self, client_id, pool, states, task, true); },
      [=](shadow_atom, const Buffer& task) { return train(self, client_id, pool, states, task, false); },
  };
}

}  // namespace drift::actors
