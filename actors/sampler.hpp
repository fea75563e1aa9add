#pragma once
#include <caf/fwd.hpp>

#include <memory>
#include <string>

#include "actors/protocols.hpp"
#include "engine/config/scenario.hpp"
#include "engine/population/population.hpp"

namespace drift::actors {

// Hosts the scenario's CohortSampler (engine/sampling): the population's availability, the
// timeline's sampler and fraction changes, and every client's sampling history. Answers
// (select_atom, SelectionRequest buffer) with a Selection buffer; a request it cannot serve
// (a malformed message, an unknown client) is answered with an error naming why. Answers
// checkpoint_atom with its state; `restore`, when not empty, is a state it starts from (a
// resumed run's).
sampler_actor::behavior_type sampler(sampler_actor::pointer self, std::shared_ptr<const Scenario> scenario,
                                     std::shared_ptr<const Population> population, std::string restore);

}  // namespace drift::actors
