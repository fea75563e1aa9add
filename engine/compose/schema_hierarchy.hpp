#pragma once
// The [hierarchy] section of the scenario's key table (engine/compose/schema.cpp holds the rest).
#include "engine/compose/schema.hpp"

namespace drift {

ScenarioSection hierarchy_section();  // [hierarchy]

}  // namespace drift
