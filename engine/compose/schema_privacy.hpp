#pragma once
// The privacy sections of the scenario's key table (engine/compose/schema.cpp holds the rest).
#include "engine/compose/schema.hpp"

namespace drift {

ScenarioSection privacy_section();             // [privacy]
ScenarioSection secure_aggregation_section();  // [secure_aggregation]

}  // namespace drift
