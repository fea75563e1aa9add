#include "engine/compose/consistency.hpp"

#include <cstdio>

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
  if (s.privacy.mode != PrivacyMode::none && s.privacy.delta >= 1.0 / s.clients) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "privacy.delta = %g is not below 1 / clients = %g: a mechanism that publishes one client's data "
                  "whole would meet it",
                  s.privacy.delta, 1.0 / s.clients);
    out.push_back(text);
  }
  return out;
}

}  // namespace drift
