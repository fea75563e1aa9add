#pragma once
// Every field of a run's summary, described once: how it reduces the aggregations' values, its
// key in summary.json, its row in a run page's summary table and its column in a study's
// tables. summarize(), RunDirectory::write_summary, readable_summary() and the study tables all
// walk this list, so adding a summary field is a RunSummary member and its line below.
#include <cmath>
#include <cstdint>
#include <string_view>

#include "engine/metrics/round_report.hpp"
#include "engine/metrics/summary.hpp"

namespace drift {

// How the aggregations' values become the field's value.
enum class Reduce : std::uint8_t {
  computed,     // summarize() works it out from the accuracy facts (best, final, targets, ...)
  total,        // the sum over every aggregation
  finite_mean,  // the mean of the finite values; NaN when there is none
  last_known,   // the last value that is not NaN; NaN when there is none
};

// How a run page shows the value.
enum class Shown : std::uint8_t {
  hidden,              // not a row of its own (a group's prose row, or shown elsewhere)
  count,               // 12
  decimal,             // 0.123
  percent,             // 41.2 %
  duration,            // 2.5 h
  rounds_by_target,    // 50 %: round 12; 70 %: not reached
  duration_by_target,  // 50 %: 2.5 h; ...
  percent_by_time,     // 1 h: 41.2 %; ...
  counts_in_group,     // one row for the group: "12 aggregated, 3 late, ..."
};

// Where summary.json keeps the value.
enum class Kept : std::uint8_t {
  always,
  when_finite,              // left out when NaN (never measured)
  with_secure_aggregation,  // only when a round ran the protocol
  in_privacy_object,        // written by the privacy summary, with its bound and delta
};

// A study column: value × scale, printed with `digits` decimals (study.csv adds two).
struct StudyColumn {
  std::string_view name;  // empty: not a column; for per-target fields the prefix of each column
  int digits = 3;
  double scale = 1.0;
  bool accuracy = false;       // withheld for diverged runs
  bool in_markdown = true;     // study.md shows the columns a reader compares; study.csv all
  bool measured_only = false;  // study.md leaves it out when no run measured it
  bool hours = false;          // a virtual time in hours: study.md picks a unit that suits the study
  double key_scale = 1.0;      // per-target fields: the column names the target × key_scale
  std::string_view suffix = {};
};

struct SummaryField {
  std::string_view key;  // in summary.json; "group.key" is `key` inside the object `group`
  Reduce reduce = Reduce::computed;
  double (*of)(const RoundReport&) = nullptr;  // the aggregation's value (not for `computed`)
  std::string_view label = {};                 // the run page's row
  Shown shown = Shown::hidden;
  Kept kept = Kept::always;
  StudyColumn column = {};
};

// An edge-tier value of a cloud round, NaN in a flat run (whose report has no edges).
inline double in_hierarchy(const RoundReport& r, double value) { return r.edge_updates.empty() ? std::nan("") : value; }

// Each field once, in the order of the run page's rows and the study's columns:
// `visit(SummaryField, member)`.
template <class Summary, class Visit>  // Summary: RunSummary or const RunSummary
void visit_summary_fields(Summary& s, Visit&& visit) {
  using R = Reduce;
  using S = Shown;
  using K = Kept;
  using RR = const RoundReport&;
  visit(SummaryField{"rounds", R::computed, nullptr, "rounds", S::count, K::always, {"rounds", 0, 1, false, false}},
        s.rounds);
  visit(SummaryField{"evaluations"}, s.evaluations);
  visit(SummaryField{"virtual_time",
                     R::computed,
                     nullptr,
                     "virtual time",
                     S::duration,
                     K::always,
                     {"virtual_hours", 2, 1.0 / 3600.0, false, true, false, true}},
        s.virtual_time);
  visit(
      SummaryField{
          "best_accuracy", R::computed, nullptr, "best accuracy", S::percent, K::always, {"best_accuracy", 4, 1, true}},
      s.best_accuracy);
  visit(SummaryField{"best_round", R::computed, nullptr, "best round", S::count}, s.best_round);
  visit(SummaryField{"last5_mean_accuracy",
                     R::computed,
                     nullptr,
                     "mean of the last 5 evaluations",
                     S::percent,
                     K::always,
                     {"last5_accuracy", 4, 1, true}},
        s.last5_mean_accuracy);
  visit(SummaryField{"final_accuracy",
                     R::computed,
                     nullptr,
                     "final accuracy",
                     S::percent,
                     K::always,
                     {"final_accuracy", 4, 1, true}},
        s.final_accuracy);
  visit(SummaryField{"final_loss"}, s.final_loss);
  visit(SummaryField{"rounds_to_accuracy",
                     R::computed,
                     nullptr,
                     "first round at accuracy",
                     S::rounds_by_target,
                     K::always,
                     {"rounds_to_", 1, 1, true, false, false, false, 100}},
        s.rounds_to);
  visit(SummaryField{"time_to_accuracy",
                     R::computed,
                     nullptr,
                     "virtual time to accuracy",
                     S::duration_by_target,
                     K::always,
                     {"hours_to_", 2, 1.0 / 3600.0, true, true, false, true, 100}},
        s.time_to);
  visit(SummaryField{"accuracy_at_time",
                     R::computed,
                     nullptr,
                     "accuracy after virtual time",
                     S::percent_by_time,
                     K::always,
                     {"accuracy_at_", 4, 1, true, true, false, false, 1, "s"}},
        s.accuracy_at);
  visit(SummaryField{"mean_cohort_tv",
                     R::finite_mean,
                     [](RR r) { return r.cohort_tv; },
                     "mean cohort drift (TV)",
                     S::decimal,
                     K::always,
                     {"mean_cohort_tv"}},
        s.mean_cohort_tv);
  visit(SummaryField{"mean_cohort_change_tv",
                     R::finite_mean,
                     [](RR r) { return r.change_tv; },
                     "mean change between cohorts (TV)",
                     S::decimal,
                     K::always,
                     {"mean_cohort_change_tv"}},
        s.mean_change_tv);
  visit(SummaryField{"mean_participation_bias",
                     R::finite_mean,
                     [](RR r) { return r.participation_bias; },
                     "mean participation bias",
                     S::decimal,
                     K::always,
                     {"mean_participation_bias"}},
        s.mean_participation_bias);
  visit(SummaryField{"mean_participation_bias_uniform",
                     R::finite_mean,
                     [](RR r) { return r.participation_bias_uniform; },
                     "mean participation bias against uniform",
                     S::decimal,
                     K::always,
                     {"mean_participation_bias_uniform"}},
        s.mean_participation_bias_uniform);
  visit(SummaryField{"mean_update_drift",
                     R::finite_mean,
                     [](RR r) { return r.shadow_clients > 0 ? r.update_drift : std::nan(""); },
                     "mean update drift",
                     S::decimal,
                     K::when_finite,
                     {"mean_update_drift", 3, 1, false, true, true}},
        s.mean_update_drift);
  // evaluation.per_client: who the model served at the last per-client evaluation.
  visit(SummaryField{"client_accuracy.p10",
                     R::last_known,
                     [](RR r) { return r.client_summary ? r.client_accuracy_p10 : std::nan(""); },
                     "10th-percentile client accuracy",
                     S::percent,
                     K::when_finite,
                     {"client_p10_accuracy", 4, 1, true, true, true}},
        s.client_p10);
  visit(SummaryField{"client_accuracy.participation_correlation",
                     R::last_known,
                     [](RR r) { return r.client_summary ? r.client_participation_correlation : std::nan(""); },
                     "client accuracy vs participation rate (correlation)",
                     S::decimal,
                     K::when_finite,
                     {"client_rate_correlation", 3, 1, false, true, true}},
        s.client_rate_correlation);
  visit(SummaryField{"client_accuracy.held_out",
                     R::last_known,
                     [](RR r) { return r.client_summary ? r.client_accuracy_held_out : std::nan(""); },
                     "held-out clients' accuracy",
                     S::percent,
                     K::when_finite,
                     {"held_out_accuracy", 4, 1, true, true, true}},
        s.held_out_accuracy);
  // [privacy]: the guarantee at the end, and the design's figure beside it (docs/privacy.md).
  visit(SummaryField{"epsilon",
                     R::last_known,
                     [](RR r) { return r.dp ? r.dp_epsilon : std::nan(""); },
                     {},
                     S::hidden,
                     K::in_privacy_object,
                     {"epsilon", 3, 1, false, true, true}},
        s.epsilon);
  visit(SummaryField{"epsilon_amplified",
                     R::last_known,
                     [](RR r) { return r.dp ? r.dp_epsilon_amplified : std::nan(""); },
                     {},
                     S::hidden,
                     K::in_privacy_object,
                     {"epsilon_amplified", 3, 1, false, false, true}},
        s.epsilon_amplified);
  visit(SummaryField{"epsilon_max_client",
                     R::last_known,
                     [](RR r) { return r.dp ? r.dp_epsilon_max_client : std::nan(""); },
                     {},
                     S::hidden,
                     K::in_privacy_object},
        s.epsilon_max_client);
  // [secure_aggregation]: the rounds that ran the protocol, those that aborted, and totals.
  visit(SummaryField{"secure_aggregation.rounds",
                     R::total,
                     [](RR r) { return r.sa ? 1.0 : 0.0; },
                     {},
                     S::hidden,
                     K::with_secure_aggregation},
        s.secagg_rounds);
  visit(SummaryField{"secure_aggregation.aborted",
                     R::total,
                     [](RR r) { return r.sa && r.sa_aborted ? 1.0 : 0.0; },
                     {},
                     S::hidden,
                     K::with_secure_aggregation,
                     {"secagg_aborted", 0, 1, false, true, true}},
        s.secagg_aborted);
  visit(SummaryField{"secure_aggregation.seconds",
                     R::total,
                     [](RR r) { return r.sa ? r.sa_seconds : 0.0; },
                     {},
                     S::hidden,
                     K::with_secure_aggregation},
        s.secagg_seconds);
  visit(SummaryField{"secure_aggregation.extra_seconds",
                     R::total,
                     [](RR r) { return r.sa ? r.sa_extra_seconds : 0.0; },
                     {},
                     S::hidden,
                     K::with_secure_aggregation},
        s.secagg_extra_seconds);
  visit(SummaryField{"secure_aggregation.bytes",
                     R::total,
                     [](RR r) { return r.sa ? static_cast<double>(r.sa_bytes_up + r.sa_bytes_down) : 0.0; },
                     {},
                     S::hidden,
                     K::with_secure_aggregation},
        s.secagg_bytes);
  visit(SummaryField{"secure_aggregation.overflow_count",
                     R::total,
                     [](RR r) { return r.sa ? static_cast<double>(r.sa_overflows) : 0.0; },
                     {},
                     S::hidden,
                     K::with_secure_aggregation},
        s.secagg_overflows);
  visit(SummaryField{"mean_cohort_js",
                     R::finite_mean,
                     [](RR r) { return r.cohort_js; },
                     {},
                     S::hidden,
                     K::always,
                     {"mean_cohort_js", 3, 1, false, false}},
        s.mean_cohort_js);
  visit(SummaryField{"mean_cohort_change_js",
                     R::finite_mean,
                     [](RR r) { return r.change_js; },
                     {},
                     S::hidden,
                     K::always,
                     {"mean_cohort_change_js", 3, 1, false, false}},
        s.mean_change_js);
  visit(SummaryField{"updates.aggregated", R::total, [](RR r) { return double(r.num_updates); }, "updates",
                     S::counts_in_group},
        s.updates);
  visit(SummaryField{"updates.finished", R::total, [](RR r) { return double(r.finished); }, "updates",
                     S::counts_in_group},
        s.finished);
  visit(SummaryField{"updates.late",
                     R::total,
                     [](RR r) { return double(r.late); },
                     "updates",
                     S::counts_in_group,
                     K::always,
                     {"late", 0, 1, false, false}},
        s.late);
  visit(SummaryField{"updates.dropped",
                     R::total,
                     [](RR r) { return double(r.dropped); },
                     "updates",
                     S::counts_in_group,
                     K::always,
                     {"dropped", 0}},
        s.dropped);
  visit(SummaryField{"updates.failed",
                     R::total,
                     [](RR r) { return double(r.failed); },
                     "updates",
                     S::counts_in_group,
                     K::always,
                     {"failed", 0}},
        s.failed);
  visit(SummaryField{"discarded_samples", R::total, [](RR r) { return double(r.discarded_samples); }},
        s.discarded_samples);
  visit(SummaryField{"wasted_compute_seconds",
                     R::total,
                     [](RR r) { return r.wasted_compute_seconds; },
                     "wasted compute (virtual)",
                     S::duration,
                     K::always,
                     {"wasted_compute_hours", 3, 1.0 / 3600.0}},
        s.wasted_compute_seconds);
  visit(SummaryField{"bytes.down",
                     R::total,
                     [](RR r) { return double(r.bytes_down); },
                     "bytes",
                     S::counts_in_group,
                     K::always,
                     {"megabytes_down", 1, 1e-6, false, false}},
        s.bytes_down);
  visit(SummaryField{"bytes.up",
                     R::total,
                     [](RR r) { return double(r.bytes_up); },
                     "bytes",
                     S::counts_in_group,
                     K::always,
                     {"megabytes_up", 1, 1e-6, false, false}},
        s.bytes_up);
  // [hierarchy]: the edges' fates over the run, and drift and participation bias at the edge
  // tier (NaN in a flat run, which leaves them out).
  visit(SummaryField{"edges.sampled", R::total, [](RR r) { return in_hierarchy(r, double(r.edges_sampled.size())); },
                     "edges", S::counts_in_group, K::when_finite},
        s.edges_sampled);
  visit(SummaryField{"edges.reported",
                     R::total,
                     [](RR r) { return in_hierarchy(r, double(r.edges_reported.size())); },
                     "edges",
                     S::counts_in_group,
                     K::when_finite,
                     {"edges_reported", 0, 1, false, false, true}},
        s.edges_reported);
  visit(SummaryField{"edges.lost",
                     R::total,
                     [](RR r) { return in_hierarchy(r, double(r.edges_lost.size())); },
                     "edges",
                     S::counts_in_group,
                     K::when_finite,
                     {"edges_lost", 0, 1, false, true, true}},
        s.edges_lost);
  visit(SummaryField{"edges.mean_reported_tv",
                     R::finite_mean,
                     [](RR r) { return in_hierarchy(r, r.edge_reported_tv); },
                     "mean drift of the reporting edges' clients (TV)",
                     S::decimal,
                     K::when_finite,
                     {"mean_edge_reported_tv", 3, 1, false, true, true}},
        s.mean_edge_reported_tv);
  visit(SummaryField{"edges.mean_participation_bias",
                     R::finite_mean,
                     [](RR r) { return in_hierarchy(r, r.edge_participation_bias); },
                     "mean participation bias of the edges",
                     S::decimal,
                     K::when_finite,
                     {"mean_edge_participation_bias", 3, 1, false, true, true}},
        s.mean_edge_participation_bias);
}

}  // namespace drift
