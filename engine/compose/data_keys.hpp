#pragma once
// Reading the scenario's data keys that span sections (engine/compose/data_keys.cpp); used by
// scenario_builder.cpp.
#include <toml++/toml.h>

#include <cstdint>
#include <string>

#include "engine/config/scenario.hpp"

namespace drift {

// Partition keys that are each valid but do not fit the data or each other; empty when they do.
std::string partition_conflict(const PartitionConfig& p, const DataConfig& data, std::uint32_t clients);

// s.data.augment (the preset's values, then the keys the file sets) written back into the
// table, so that the resolved scenario spells them out. Throws UserError for text data.
void finish_augment(const Scenario& s, toml::table& root, const std::string& source);

}  // namespace drift
