#pragma once
// The scenario file's schema: its sections and their keys. [algorithm] is open: its keys
// besides `name` come from the chosen algorithm's ParamSpecs.
#include <string>
#include <vector>

#include "engine/scenario/param_spec.hpp"

namespace drift {

struct SectionSpec {
  std::string name;  // "" for top-level keys
  std::string help;
  std::vector<ParamSpec> keys;
};

const std::vector<SectionSpec>& scenario_schema();

}  // namespace drift
