#include "actors/device_pool.hpp"

#include <deque>

#include "actors/wire.hpp"

namespace drift::actors {
namespace {

struct PoolState {
  std::vector<caf::actor> slots;
  std::deque<std::uint32_t> idle;
  std::deque<std::pair<caf::response_promise, caf::message>> queue;
};

}  // namespace

caf::behavior device_pool(caf::event_based_actor* self, std::uint32_t slots, SlotContext ctx) {
  auto state = std::make_shared<PoolState>();
  for (std::uint32_t i = 0; i < slots; ++i) {
    state->slots.push_back(self->spawn<caf::detached + caf::linked>(trainer_slot, caf::actor{self}, i, ctx));
    state->idle.push_back(i);
  }
  auto dispatch = [state] {
    while (!state->idle.empty() && !state->queue.empty()) {
      auto [promise, job] = std::move(state->queue.front());
      state->queue.pop_front();
      const auto slot = state->idle.front();
      state->idle.pop_front();
      promise.delegate(state->slots[slot], std::move(job));
    }
  };
  return {
      [=](train_atom a, const Buffer& client_state, const Buffer& task) {
        state->queue.emplace_back(self->make_response_promise(), caf::make_message(a, client_state, task));
        dispatch();
      },
      [=](eval_atom a, const Buffer& job, const Buffer& weights) {
        state->queue.emplace_back(self->make_response_promise(), caf::make_message(a, job, weights));
        dispatch();
      },
      [=](idle_atom, std::uint32_t slot) {
        state->idle.push_back(slot);
        dispatch();
      },
  };
}

}  // namespace drift::actors
