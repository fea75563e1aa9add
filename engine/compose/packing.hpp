#pragma once
// Whether a scenario's sync rounds train their clients in packs (devices.pack;
// docs/performance.md#packed-clients). The answer depends on the scenario alone, never on
// slots or timing, so every process of a run packs the same clients together.
#include <cstdint>
#include <string>

#include "engine/config/scenario.hpp"

namespace drift {

// Why devices.pack does not pack this scenario: an algorithm whose local objective the packed
// trainer does not compute, or an architecture that does not pack. Empty when it packs.
std::string pack_refusal(const Scenario& scenario);

// The pack size in effect: devices.pack when the scenario packs, else 1.
std::uint32_t effective_pack(const Scenario& scenario);

}  // namespace drift
