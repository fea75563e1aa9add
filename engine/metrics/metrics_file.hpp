#pragma once
// Reading a run directory's metrics.jsonl back: what studies and figures are made from, so
// they can be rebuilt from the files alone (docs/outputs.md#metrics).
#include <filesystem>
#include <vector>

#include "engine/metrics/summary.hpp"

namespace drift {

// One RoundFacts per line. Nulls (NaN when written) read back as NaN. A malformed line is a
// UserError naming the file and line; a last line cut short (a run killed mid-write) is skipped.
std::vector<RoundFacts> read_metrics_file(const std::filesystem::path& path);

}  // namespace drift
