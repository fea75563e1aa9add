#include "actors/sampler.hpp"

#include "actors/wire.hpp"
#include "engine/sampling/cohort_sampler.hpp"
#include "messages/selection_codec.hpp"

namespace drift::actors {

sampler_actor::behavior_type sampler(sampler_actor::pointer self, std::shared_ptr<const Scenario> scenario,
                                     std::shared_ptr<const Population> population, std::string restore) {
  // The scenario and population outlive the sampler: it holds them.
  auto state = std::make_shared<CohortSampler>(*scenario, population);
  self->attach_functor([scenario, population, state] {});
  std::string failure;
  if (!restore.empty()) {
    try {
      auto ar = StateArchive::reader(std::move(restore), "the checkpoint's sampler state");
      state->archive(ar);
      ar.expect_end();
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  return {
      [state, failure](select_atom, const Buffer& request) -> caf::result<Buffer> {
        if (!failure.empty()) return caf::make_error(caf::sec::runtime_error, failure);
        try {
          return msg::encode_selection(state->answer(msg::decode_selection_request(request)));
        } catch (const std::exception& e) {
          return caf::make_error(caf::sec::runtime_error, std::string("sampler: ") + e.what());
        }
      },
      [state](checkpoint_atom) -> Buffer {
        auto ar = StateArchive::writer();
        state->archive(ar);
        const auto& bytes = ar.bytes();
        return Buffer(std::vector<char>(bytes.begin(), bytes.end()));
      },
  };
}

}  // namespace drift::actors
