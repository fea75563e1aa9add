#pragma once
// summary.json for a person (a run page's table): percentages, durations in a unit that suits
// them, "not reached" for a target never met, counts in words.
#include <nlohmann/json_fwd.hpp>

#include <string>
#include <utility>
#include <vector>

namespace drift {

// (label, value) rows in reading order, for the keys that `summary` has.
std::vector<std::pair<std::string, std::string>> readable_summary(const nlohmann::json& summary);

}  // namespace drift
