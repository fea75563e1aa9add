#pragma once
#include <caf/all.hpp>

#include <memory>

#include "engine/scenario/scenario.hpp"

namespace drift::actors {

// Answers "who runs in round r" with the engine's sampler for the scenario.
caf::behavior sampler_actor(caf::event_based_actor* self, std::shared_ptr<const Scenario> scenario);

}  // namespace drift::actors
