#pragma once
// The two halves of reading a scenario's TOML table, used by loader.cpp: validation against
// the schema (filling in defaults), then conversion into the Scenario structs.
#include <toml++/toml.h>

#include <set>
#include <string>

#include "engine/config/scenario.hpp"

namespace drift {

// Checks every key of `root` against the schema and the registries, inserting defaults.
// Throws UserError naming file:line:column (or the --set flag), the key and a suggestion.
void validate_scenario_table(toml::table& root, const std::string& source, const std::set<std::string>& overridden);

// The Scenario of a validated table; `root` gets absolute trace paths (and becomes the
// resolved scenario text). Throws UserError for keys that are valid alone but not together.
Scenario build_scenario(toml::table& root, const std::string& source);

}  // namespace drift
