#pragma once
// What `drift validate` says of a hierarchy's edges (docs/hierarchy.md): how many clients they
// hold and how far their labels are from the population's, and each named edge's link and
// availability, so a person sees the edge tier before a long run.
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/population/population.hpp"

namespace drift {

// Lines to print (without indentation), none for a flat federation.
std::vector<std::string> edge_description(const Scenario& scenario, const Population& population);

}  // namespace drift
