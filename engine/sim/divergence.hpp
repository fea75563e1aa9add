#pragma once
// When a run has diverged: an aggregation in which every update that came back failed (the
// clients' losses went non-finite, typically), a non-finite aggregated training loss, or a
// global model holding a non-finite value. Such a run is reported as diverged, never as a
// number (docs/outputs.md#status).
#include <string>

#include "engine/metrics/round_report.hpp"
#include "engine/tensors/named_tensors.hpp"

namespace drift {

// Why `report` (with the global model after it, if the server keeps one) counts as diverged,
// or "" when it does not.
std::string divergence_of(const RoundReport& report, const NamedTensors* global);

// The same for updates that failed while none finished, with no aggregation to show for them
// (asynchronous modes): diverged once as many failed in a row as an aggregation needs.
std::string failed_streak_divergence(std::uint32_t failed_in_a_row, std::uint32_t needed);

}  // namespace drift
