#pragma once
// One scenario value against its ParamSpec: its type, that it is finite, its range (an integer
// key without an upper bound of its own is held to 32 bits, the type drift keeps counts in), and
// for a named choice that it exists, with a did-you-mean. Throws UserError prefixed by `where`
// (file:line:column, as the validator writes places).
#include <toml++/toml.h>

#include <string>
#include <vector>

#include "engine/config/key_binding.hpp"
#include "engine/config/param_spec.hpp"

namespace drift {

ParamValue read_value(const ParamSpec& spec, const std::string& path, const toml::node& node, const std::string& where);

// Every key of `keys` that the validated `table` holds, into the target, in table order.
template <class Target>
void store_keys(Target& target, const std::vector<KeyBinding<Target>>& keys, const toml::table& table,
                const std::string& section) {
  for (const auto& k : keys)
    if (table.contains(k.spec.key)) {
      const std::string path = section + "." + k.spec.key;
      k.store(target, read_value(k.spec, path, *table.get(k.spec.key), path));
    }
}

}  // namespace drift
