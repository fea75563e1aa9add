#include "actors/sampler_actor.hpp"

#include "actors/wire.hpp"
#include "engine/sampling/sampler.hpp"
#include "messages/codec.hpp"

namespace drift::actors {

caf::behavior sampler_actor(caf::event_based_actor* self, std::shared_ptr<const Scenario> scenario) {
  std::shared_ptr<Sampler> sampler = make_sampler(*scenario);
  return {
      [=](select_atom, const Buffer& request) -> Buffer {
        const auto round = msg::decode_selection_request(request);
        return msg::encode_selection({round, sampler->select(round)});
      },
  };
}

}  // namespace drift::actors
