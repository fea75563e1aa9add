#include "actors/sampler.hpp"

#include "actors/wire.hpp"
#include "engine/sampling/cohort_sampler.hpp"
#include "messages/selection_codec.hpp"

namespace drift::actors {

sampler_actor::behavior_type sampler(sampler_actor::pointer self, std::shared_ptr<const Scenario> scenario,
                      std::shared_ptr<const Population> population) {
  // The scenario and population outlive the sampler: it holds them.
  auto state = std::make_shared<CohortSampler>(*scenario, population);
  self->attach_functor([scenario, population, state] {});
  return {
      [state](select_atom, const Buffer& request) -> caf::result<Buffer> {
        try {
          return msg::encode_selection(state->answer(msg::decode_selection_request(request)));
        } catch (const std::exception& e) {
          return caf::make_error(caf::sec::runtime_error, std::string("sampler: ") + e.what());
        }
      },
  };
}

}  // namespace drift::actors
