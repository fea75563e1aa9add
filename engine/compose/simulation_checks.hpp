#pragma once
// Checks of the [simulation] section that involve several of its keys, for scenario_builder.
#include <string>

#include "engine/config/scenario.hpp"

namespace drift {

// Throws UserError (prefixed with `source`) when simulation.partial_work or
// simulation.stragglers cannot run as configured.
void check_partial_work(const Scenario& s, const std::string& source);

}  // namespace drift
