#include "engine/compose/consistency.hpp"

#include <cmath>
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
  const auto& sa = s.secure_aggregation;
  if (sa.protocol != SecAggProtocol::none && sa.encoding == SecAggEncoding::flower) {
    char text[300];
    // Flower checks one neighbourhood against M / Q; the sum runs over the whole cohort.
    const double capacity = std::ldexp(1.0, static_cast<int>(sa.modulus_bits - sa.quantization_bits));
    if (s.clients >= capacity) {
      std::snprintf(text, sizeof text,
                    "secure_aggregation: a cohort of %.0f or more clients wraps the sum modulo 2^%lld (2^%lld levels "
                    "each); overflow_count in metrics.jsonl counts the elements that wrapped",
                    capacity, static_cast<long long>(sa.modulus_bits), static_cast<long long>(sa.quantization_bits));
      out.push_back(text);
    }
    if (s.privacy.mode != PrivacyMode::none && sa.clip_range < s.privacy.clip) {
      std::snprintf(text, sizeof text,
                    "secure_aggregation.clip_range = %g is below privacy.clip = %g: coordinates of a clipped update "
                    "can still be cut, which the noise is not calibrated for",
                    sa.clip_range, s.privacy.clip);
      out.push_back(text);
    }
  }
  return out;
}

}  // namespace drift
