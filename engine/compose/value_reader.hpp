#pragma once
// One scenario value against its ParamSpec: its type, that it is finite, its range (an integer
// key without an upper bound of its own is held to 32 bits, the type drift keeps counts in), and
// for a named choice that it exists, with a did-you-mean. Throws UserError prefixed by `where`
// (file:line:column, as the validator writes places).
#include <toml++/toml.h>

#include <string>

#include "engine/config/param_spec.hpp"

namespace drift {

ParamValue read_value(const ParamSpec& spec, const std::string& path, const toml::node& node, const std::string& where);

}  // namespace drift
