#pragma once
// metrics.jsonl both ways: the line a run appends per aggregation, and the reports read back
// from it, which is what studies and figures are made from so they can be rebuilt from the files
// alone (docs/outputs.md#metrics). visit_report_fields decides which key each field is written
// under and when; nothing here names a field.
#include <filesystem>
#include <string>
#include <vector>

#include "engine/metrics/round_report.hpp"
#include "engine/metrics/summary.hpp"

namespace drift {

// One line of metrics.jsonl, with its newline. `shadow_clients`: the run measures update drift,
// so every line carries the "update_drift" object.
std::string metrics_line(const RoundReport& report, bool shadow_clients);

// One report per line: what the line holds, the rest left at its default (a distance missing from
// a line reads as NaN). Nulls (NaN when written) read back as NaN; a count too wide for its
// field is not read rather than wrapped. A malformed line is a UserError naming the file and
// line; a last line cut short (a run killed mid-write) is skipped.
std::vector<RoundReport> read_metrics_reports(const std::filesystem::path& path);

// The same, kept as RoundFacts only: what a summary needs, without every round's lists.
std::vector<RoundFacts> read_metrics_file(const std::filesystem::path& path);

}  // namespace drift
