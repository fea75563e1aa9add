#pragma once
// When a run has diverged: an aggregation in which every update that came back failed (the
// clients' losses went non-finite, typically), a non-finite aggregated training loss, or a
// global model holding a non-finite value. Such a run is reported as diverged, never as a
// number (docs/outputs.md#status).
#include <string>
#include <vector>

#include "engine/metrics/round_report.hpp"

namespace drift {

// Declared, not included: the metrics sink applies these rules without LibTorch's headers
// (named_tensors.hpp defines the same alias).
struct NamedTensor;
using NamedTensors = std::vector<NamedTensor>;

// Why `report` (with the global model after it, if the server keeps one) counts as diverged,
// or "" when it does not.
std::string divergence_of(const RoundReport& report, const NamedTensors* global);

// Why the evaluation in `report` shows divergence, or "": the driver cannot see the test loss,
// and a model whose test loss is not finite has diverged as surely as one holding a NaN. Applied
// where the evaluations join the report, before it is written.
std::string evaluation_divergence(const RoundReport& report);

// The same for updates that failed while none finished, with no aggregation to show for them
// (asynchronous modes): diverged once as many failed in a row as an aggregation needs.
std::string failed_streak_divergence(std::uint32_t failed_in_a_row, std::uint32_t needed);

}  // namespace drift
