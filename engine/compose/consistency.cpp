#include "engine/compose/consistency.hpp"

#include "engine/compose/packing.hpp"
#include "engine/compose/schema.hpp"

namespace drift {

std::vector<std::string> consistency_warnings(const Scenario& s) {
  // Each key says where it does nothing (engine/compose/schema.cpp); packing's reasons are
  // the packing rules'.
  std::vector<std::string> out = idle_key_warnings(s);
  if (s.pack > 1)
    if (const auto why = pack_refusal(s); !why.empty())
      out.push_back("devices.pack does nothing here: " + why + "; clients train one at a time");
  return out;
}

}  // namespace drift
