#pragma once
// The headline numbers of a run. In rounds, in the three reporting conventions of the papers we
// reproduce (best round: FedSKC, FedSC, FedKTL; mean of the last five: FedCCL; rounds-to-X);
// and in virtual time, which is what a sync round and a FedBuff aggregation have in common:
// time to each target, accuracy at given budgets. docs/outputs.md#summary defines each one.
#include <array>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/config/choices.hpp"
#include "engine/metrics/round_report.hpp"

namespace drift {

// How a run ended. `completed`: every round ran; `ended`: the driver saw that no progress was
// possible (nobody can come online again); `diverged`: a round in which every update failed,
// or a non-finite model; `stopped`: the run could not go on (a worker protocol error, ...);
// `interrupted`: a signal stopped it at a checkpoint, from which `drift resume` continues.
enum class RunStatus { completed, ended, diverged, stopped, interrupted };

template <>
struct ChoiceNames<RunStatus> {
  static constexpr std::array<std::string_view, 5> names{"completed", "ended", "diverged", "stopped", "interrupted"};
};

// The status summary.json spells `name`; nullopt for any other text (a run with no summary
// yet, a study's "missing").
inline std::optional<RunStatus> run_status_named(std::string_view name) {
  const auto& names = ChoiceNames<RunStatus>::names;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<RunStatus>(i);
  return std::nullopt;
}

// Whether a run with this status is over for good: a study does not run it again, and resume
// has nothing to add (completed runs can still be extended with more rounds).
inline bool run_is_over(std::optional<RunStatus> status) {
  return status == RunStatus::completed || status == RunStatus::ended || status == RunStatus::diverged;
}

// The status in `run_dir`'s summary.json; nullopt when there is none yet (a run going on, or
// one killed before its end) or the file is unreadable.
std::optional<RunStatus> read_run_status(const std::filesystem::path& run_dir);

struct RunEnd {
  RunStatus status = RunStatus::completed;
  std::string reason;  // empty when completed
};

// What the summary and the study figures need of one aggregation (from a RoundReport, or a line
// of metrics.jsonl): the accuracy facts, and the values the summary's fields reduce.
struct RoundFacts {
  std::uint32_t round = 0;
  double time_end = 0.0;  // virtual seconds
  bool evaluated = false;
  double accuracy = 0.0, loss = 0.0;
  std::string divergence;  // why this aggregation counts as diverged; empty if it does not
  double participation_bias = 0.0, participation_bias_uniform = 0.0;  // NaN before any share
  // One per summary field that reduces aggregations, in the list's order (summary_fields.hpp).
  std::vector<double> values;
};

RoundFacts facts_of(const RoundReport& report);

struct SummaryTargets {
  std::vector<double> accuracies;  // evaluation.targets
  std::vector<double> times;       // evaluation.at_times, virtual seconds
};

struct RunSummary {
  std::uint32_t rounds = 0;
  std::uint32_t evaluations = 0;
  double best_accuracy = 0.0;
  std::uint32_t best_round = 0;
  double final_accuracy = 0.0;
  double final_loss = 0.0;
  double last5_mean_accuracy = 0.0;  // mean over the last min(5, evaluations) evaluations
  std::vector<std::pair<double, std::optional<std::uint32_t>>> rounds_to;  // target -> first round
  double virtual_time = 0.0;                                               // end of the last aggregation
  std::vector<std::pair<double, std::optional<double>>> time_to;           // target -> first virtual time
  std::vector<std::pair<double, std::optional<double>>> accuracy_at;       // budget -> accuracy then
  // Means over the aggregations where they are defined; NaN when none is.
  double mean_cohort_tv = 0.0, mean_cohort_js = 0.0, mean_change_tv = 0.0, mean_change_js = 0.0;
  double mean_update_drift = 0.0;  // NaN when never measured
  // evaluation.per_client, at its last evaluation: the 10th-percentile client's accuracy, the
  // correlation of accuracy with participation rate, the held-out clients' mean (NaN: none).
  double client_p10 = 0.0, client_rate_correlation = 0.0, held_out_accuracy = 0.0;
  double mean_participation_bias = 0.0, mean_participation_bias_uniform = 0.0;
  // [privacy]: epsilon after the last aggregation (NaN in a run without privacy).
  double epsilon = std::numeric_limits<double>::quiet_NaN();
  double epsilon_amplified = std::numeric_limits<double>::quiet_NaN();
  double epsilon_max_client = std::numeric_limits<double>::quiet_NaN();
  std::uint64_t updates = 0, finished = 0, late = 0, dropped = 0, failed = 0;
  std::uint64_t discarded_samples = 0;
  double wasted_compute_seconds = 0.0;
  std::uint64_t bytes_down = 0, bytes_up = 0;  // model and update traffic of the aggregations
  // [secure_aggregation]: rounds that ran the protocol, those that aborted, and totals.
  std::uint32_t secagg_rounds = 0, secagg_aborted = 0;
  double secagg_seconds = 0.0, secagg_extra_seconds = 0.0;
  std::uint64_t secagg_bytes = 0, secagg_overflows = 0;
  // [hierarchy]: totals over cloud rounds, and means (NaN in a flat run).
  double edges_sampled = std::numeric_limits<double>::quiet_NaN();
  double edges_reported = std::numeric_limits<double>::quiet_NaN();
  double edges_lost = std::numeric_limits<double>::quiet_NaN();
  double mean_edge_reported_tv = std::numeric_limits<double>::quiet_NaN();
  double mean_edge_participation_bias = std::numeric_limits<double>::quiet_NaN();
  std::optional<std::uint32_t> diverged_round;  // the first aggregation that diverged
  std::string divergence;                       // and why
};

// Accuracy at budget T is that of the last evaluation at or before T: the model a user would
// have had at T (so a run that finished earlier keeps its final accuracy); none when nothing
// was evaluated by T.
RunSummary summarize(const std::vector<RoundFacts>& rounds, const SummaryTargets& targets);

// summary.json's fields of `s` (summary_fields.hpp), and `diverged` when it did; the run's
// status, times and privacy object are the run directory's to add.
nlohmann::json summary_fields_json(const RunSummary& s);

}  // namespace drift
