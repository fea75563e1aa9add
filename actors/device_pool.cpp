#include "actors/device_pool.hpp"

#include <deque>

#include "actors/wire.hpp"

namespace drift::actors {
namespace {

struct PoolState {
  std::vector<DeviceSlots> devices;
  std::vector<caf::actor> slots;
  std::vector<std::size_t> device_of;          // slot -> device
  std::vector<std::deque<std::uint32_t>> idle;  // device -> idle slots, lowest first
  std::vector<std::uint32_t> running;          // device -> jobs running
  std::deque<std::pair<caf::response_promise, caf::message>> queue;
};

}  // namespace

caf::behavior device_pool(caf::event_based_actor* self, std::vector<DeviceSlots> devices, SlotContext ctx) {
  auto state = std::make_shared<PoolState>();
  state->devices = devices;
  state->idle.resize(devices.size());
  state->running.assign(devices.size(), 0);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    for (std::uint32_t k = 0; k < devices[d].slots; ++k) {
      const auto id = static_cast<std::uint32_t>(state->slots.size());
      state->slots.push_back(
          self->spawn<caf::detached + caf::linked>(trainer_slot, caf::actor{self}, id, devices[d].device, ctx));
      state->device_of.push_back(d);
      state->idle[d].push_back(id);
    }
  }
  auto dispatch = [state] {
    while (!state->queue.empty()) {
      const auto device = least_loaded_device(state->devices, state->running);
      if (!device) return;
      auto [promise, job] = std::move(state->queue.front());
      state->queue.pop_front();
      const auto slot = state->idle[*device].front();
      state->idle[*device].pop_front();
      ++state->running[*device];
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
        const auto d = state->device_of.at(slot);
        --state->running[d];
        state->idle[d].push_back(slot);
        dispatch();
      },
  };
}

}  // namespace drift::actors
