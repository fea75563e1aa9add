#pragma once
// Keys that are valid one by one but do nothing in the scenario as a whole: a deadline under
// FedBuff, FedBuff's buffer under sync rounds, a pack size no packing rule allows. Running such a
// scenario is allowed (a study may hold a key fixed across modes), but the user is told, by
// `validate` and at the start of `run`.
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"

namespace drift {

std::vector<std::string> consistency_warnings(const Scenario& scenario);

}  // namespace drift
