#pragma once
// Reading a scenario: TOML text and --set overrides in, a validated Scenario out. This is the
// composition layer's entry point: validation consults every registry (algorithms, samplers,
// models, devices), so it sits above all of them.
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"

namespace drift {

// "key=value" as given to --set; value is TOML (1, 0.5, true, "x", [1, 2]) or a bare string.
struct Override {
  std::string key;
  std::string value;
};

// Loads, applies overrides, loads the plugins the scenario names and `plugins` (paths from the
// command line), validates and resolves. Throws UserError with one line naming
// file:line:column (or the --set flag), the key, what was expected, and a suggestion.
Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides = {},
                       const std::vector<std::string>& plugins = {});
Scenario parse_scenario(const std::string& toml_text, const std::string& source_name,
                        const std::vector<Override>& overrides = {}, const std::vector<std::string>& plugins = {});

Override parse_override(const std::string& flag);  // "a.b=c"

}  // namespace drift
