#pragma once
// The scenario file's schema: its sections and their keys. [algorithm] is open: its keys
// besides `name` come from the chosen algorithm's ParamSpecs.
#include <string>
#include <vector>

#include "engine/config/param_spec.hpp"

namespace drift {

struct SectionSpec {
  std::string name;  // "" for top-level keys
  std::string help;
  std::vector<ParamSpec> keys;
};

const std::vector<SectionSpec>& scenario_schema();

// Keys of one [groups.NAME] table (it may also hold [groups.NAME.profile] and
// [groups.NAME.availability] overrides, checked against those sections' keys).
const std::vector<ParamSpec>& group_schema();
// Keys of one [[timeline]] entry.
const std::vector<ParamSpec>& timeline_schema();

}  // namespace drift
