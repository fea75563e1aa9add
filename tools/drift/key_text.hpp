#pragma once
// How `drift list`, `drift list keys` and the catalogue page (docs/catalogue.md) describe one
// key: its type, default, range and choices, the same words everywhere.
#include <string>

#include "engine/config/param_spec.hpp"

namespace drift::cli {

// A value as a scenario writes it: "0.5", "\"uniform\"", "[0.1, 0.2]", "true".
std::string value_text(const ParamValue& v);

// "number, default 1, in [1, 100]; its help", without "; its help" unless `with_help`.
std::string key_line(const ParamSpec& spec, bool with_help = true);

}  // namespace drift::cli
