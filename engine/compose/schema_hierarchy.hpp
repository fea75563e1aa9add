#pragma once
// The [hierarchy] section of the scenario's key table (engine/compose/schema.cpp holds the rest).
#include <toml++/toml.h>

#include "engine/compose/schema.hpp"

namespace drift {

ScenarioSection hierarchy_section();  // [hierarchy]

// Keys of one [hierarchy.edge.NAME] table: its own link and availability, starting from the
// [hierarchy] values, and the group it holds under assign = group. None has a default.
const std::vector<KeyBinding<EdgeProfile>>& edge_profile_keys();
const std::vector<ParamSpec>& edge_profile_schema();

// Reads [hierarchy.availability_model] and [hierarchy.edge.NAME] (validated: hierarchy.edges is
// their count, or 0 for a flat run, which warns) into scenario.hierarchy, named edges in name order.
void read_hierarchy_tables(Scenario& s, const toml::table& root);

// assign = file: records the edge map's digest as hierarchy.file_digest in `root` (the resolved
// scenario), or, when the scenario already records one, refuses a file whose bytes differ: a
// resume, or a worker, must map the clients to the edges the run started with.
void record_edge_map_digest(Scenario& s, toml::table& root);

}  // namespace drift
