#pragma once
// What the server records about one aggregation; the metrics sink turns it into files.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config/choices.hpp"
#include "engine/metrics/algorithm_metrics.hpp"

namespace drift {

enum class ClientEvent : std::uint8_t { eligible, selected, finished, late, stale, dropped, failed };

template <>
struct ChoiceNames<ClientEvent> {
  static constexpr std::array<std::string_view, 7> names{"eligible", "selected", "finished", "late",
                                                         "stale",    "dropped",  "failed"};
};

// One client event of a round, at a virtual time. Build one with the named constructors below,
// which set exactly the fields their event has.
struct ClientRecord {
  std::uint32_t client_id = 0;
  ClientEvent event = ClientEvent::eligible;
  double time = 0.0;  // virtual seconds
  std::uint64_t num_samples = 0;
  double train_loss = 0.0;
  std::uint64_t bytes_down = 0;
  std::uint64_t bytes_up = 0;
  std::uint64_t staleness = 0;  // model versions between download and aggregation
  std::uint32_t steps = 0;      // local steps the update took (finished, late, stale)
  std::string detail;
};

ClientRecord eligible_record(std::uint32_t client, double time);
ClientRecord selected_record(std::uint32_t client, double time, std::uint64_t bytes_down);
// An update that arrived: `event` is finished, late or stale.
ClientRecord arrival_record(ClientEvent event, std::uint32_t client, double time, std::uint64_t samples,
                            std::uint32_t steps, double loss, std::uint64_t bytes_up, std::uint64_t staleness,
                            std::string detail);
// A late update that was never trained (it could not meet the deadline).
ClientRecord untrained_late_record(std::uint32_t client, double time, std::uint64_t samples, std::string detail);
ClientRecord dropped_record(std::uint32_t client, double time, std::string why);
ClientRecord failed_record(std::uint32_t client, double time, std::string why);

struct RoundReport {
  std::uint32_t round = 0;
  std::uint32_t total_rounds = 0;
  std::uint64_t model_version = 0;
  double time_start = 0.0;  // virtual seconds
  double time_end = 0.0;
  std::int64_t eligible = -1;             // -1: not counted (output.log_eligible = false)
  std::int64_t online = -1;               // registered and online at the round's start; -1: not counted
  std::vector<std::uint32_t> cohort;      // selected
  std::vector<std::uint32_t> aggregated;  // whose updates entered this aggregation
  std::uint32_t num_updates = 0;
  std::uint32_t finished = 0, late = 0, dropped = 0, failed = 0;
  std::vector<std::uint64_t> staleness;  // per aggregated update, ascending
  // simulation.partial_work: the aggregated updates cut short at the deadline (-1: partial work
  // off), and each aggregated update's local steps, ascending.
  std::int64_t partial = -1;
  std::vector<std::uint32_t> update_steps;
  std::uint64_t discarded_samples = 0;  // trained, then thrown away (late or dropped)
  double wasted_compute_seconds = 0.0;  // virtual compute time of discarded and dropped work
  double cohort_tv = 0.0, cohort_js = 0.0, window_tv = 0.0, window_js = 0.0;
  // Sampling drift as FedSKC defines it: how far this aggregation's cohort label distribution
  // moved from the previous one's (NaN when either aggregated nobody).
  double change_tv = 0.0, change_js = 0.0;
  double coverage = 0.0;  // clients aggregated at least once / population
  // How far the shares the last simulation.drift_window aggregations gave clients are from the
  // objective's weights, n_i / n and 1 / N (NaN while no share was given): docs/outputs.md.
  double participation_bias = 0.0, participation_bias_uniform = 0.0;
  std::uint64_t samples = 0;
  double train_loss = 0.0;
  double train_accuracy = 0.0;
  bool evaluated = false;
  double test_accuracy = 0.0;
  double test_loss = 0.0;
  std::vector<double> per_class_accuracy;
  // Private models: each client's accuracy on its own test split, by client id, as of the
  // last model it trained (NaN: not trained yet); test_accuracy is then the sample-weighted
  // accuracy over the clients evaluated so far.
  std::vector<double> client_accuracy;
  // evaluation.per_client (docs/outputs.md#per-client-accuracy): at the aggregations due, each
  // client's participations so far (filled by the driver; they ask for the per-client pass), then
  // the global model's accuracy on each client's held-out split in client_accuracy and its summary.
  std::vector<std::uint32_t> client_participations;
  bool client_summary = false;
  double client_accuracy_mean = 0.0, client_accuracy_weighted = 0.0, client_accuracy_p10 = 0.0,
         client_accuracy_worst = 0.0, client_participation_correlation = 0.0;
  double client_accuracy_held_out = 0.0;        // federation.held_out: their mean (NaN: none)
  std::vector<std::uint32_t> held_out_clients;  // ... and who they are
  // Multi-domain datasets: accuracy on each domain's test samples, in domain order.
  std::vector<double> domain_accuracy;
  std::uint32_t clients_evaluated = 0;
  AlgorithmMetrics algorithm;  // the server half's named values of this aggregation
  // [hierarchy]: each scalar the edges' server halves reported, per edge id (NaN: an edge whose
  // model is not in this step); `algorithm` then holds only per-client values.
  NamedSeries edge_algorithm;
  std::string divergence;  // why this aggregation counts as diverged; empty if it does not
  // simulation.shadow_clients: the cohort's aggregate update against the population's
  // estimate (NaN when not measured), and what the shadow training cost.
  double update_drift = 0.0, update_cosine = 0.0;
  std::uint32_t shadow_clients = 0;
  std::uint64_t shadow_samples = 0;
  std::uint64_t bytes_down = 0;
  std::uint64_t bytes_up = 0;
  // [privacy] (docs/outputs.md#privacy): the updates clipped, the noise's standard deviation on
  // the aggregated mean, and epsilon after this aggregation: the run's guarantee, the sampling
  // design's amplified figure (NaN without a design) and the busiest client's own.
  bool dp = false;
  std::uint32_t dp_clipped = 0;
  double dp_clip = 0.0;  // the clip C this aggregation used (it moves under adaptive clipping)
  double dp_noise_std = 0.0;
  double dp_epsilon = 0.0, dp_epsilon_amplified = 0.0, dp_epsilon_max_client = 0.0;
  // [secure_aggregation] (docs/outputs.md#secure-aggregation): the survivors of each stage, the
  // threshold and neighbourhood, whether and why the round aborted, the protocol's virtual
  // seconds (and those beyond a plain upload), its bytes, and what the integer sum did.
  bool sa = false;
  std::vector<std::uint32_t> sa_survivors;
  std::uint32_t sa_threshold = 0, sa_shares = 0;
  bool sa_aborted = false;
  std::string sa_abort_stage, sa_abort_reason;
  double sa_seconds = 0.0, sa_extra_seconds = 0.0;
  std::uint64_t sa_bytes_up = 0, sa_bytes_down = 0;
  std::uint64_t sa_overflows = 0, sa_clipped_coords = 0;
  double sa_quantization_mse = 0.0;
  // [hierarchy] (docs/outputs.md#edges): this cloud round's sampled edges by fate (reported,
  // idle: nothing aggregated to send, late at the cloud's deadline, lost: offline before its
  // model arrived); per edge id, the updates it aggregated, its weight in the cloud's average (0
  // unless it reported), when its model arrived (NaN unless it reported) and how far the labels
  // of the clients it aggregated are from its own clients' (TV; NaN: none); the edge-cloud bytes.
  std::vector<std::uint32_t> edges_sampled, edges_reported, edges_idle, edges_late, edges_lost;
  std::vector<std::uint32_t> edge_updates;
  std::vector<double> edge_weight, edge_arrival, edge_cohort_tv;
  // Virtual time at the edge tier, per edge id: the edge rounds it ran, and the seconds from its
  // model's arrival at the edge to the end of its last edge round (NaN unless sampled).
  std::vector<std::uint32_t> edge_rounds_run;
  std::vector<double> edge_busy_seconds;
  // hierarchy.cloud = fedbuff: per edge id, the cloud steps since the model it sent was pulled
  // (NaN unless it reported; empty under sync clouds).
  std::vector<double> edge_staleness;
  // With timeline moves (docs/hierarchy.md#clients-moving-between-edges): per edge id, how many
  // clients it holds this cloud round (empty without moves).
  std::vector<std::uint32_t> edge_clients;
  double edge_reported_tv = 0.0;  // the reporting edges' clients' labels against the population's (NaN: none)
  // The edges' cloud weights over the drift window, normalised, against their sample shares (TV;
  // NaN while no edge reported in the window): participation bias at the edge tier.
  double edge_participation_bias = 0.0;
  std::uint64_t edge_bytes_up = 0, edge_bytes_down = 0;
  std::vector<ClientRecord> clients;
  // Wall-clock seconds: reported in timings.jsonl only, so metrics.jsonl stays comparable.
  double wall_train_seconds = 0.0;
  double wall_eval_seconds = 0.0;
};

// Where a report field goes in metrics.jsonl (docs/outputs.md#metrics).
enum class Written : std::uint8_t {
  always,
  when_counted,              // a count that is -1 when not counted
  when_not_empty,            // a text or list, left out when empty
  when_evaluated,            // only in an evaluated aggregation
  when_evaluated_not_empty,  // ... and only when the list has entries
  when_privately_evaluated,  // ... and only when private models were evaluated (client_accuracy)
  with_shadow_clients,       // in the "update_drift" object, when the run measures it
  with_privacy,              // in the "privacy" object, when the run is private (dp)
  with_secure_aggregation,   // in the "secure_aggregation" object, when the run uses it (sa)
  with_client_summary,       // in the "client_accuracy_summary" object, when measured (client_summary)
  with_edges,                // in the "edges" object, in hierarchical runs (edge_updates not empty)
  with_buffered_edges,       // ... and only under hierarchy.cloud = fedbuff (edge_staleness not empty)
  with_moving_clients,       // ... and only when the timeline moves clients (edge_clients not empty)
  with_edge_algorithm,       // ... and only when the edges' server halves report values (edge_algorithm not empty)
  not_in_metrics,            // on the wire only: clients.csv, timings.jsonl, or implied by another key
};

// One field of a RoundReport or a ClientRecord, described once. `name` is the member's name, its
// key in metrics.jsonl and, in camelCase, its field in report.capnp.
struct ReportField {
  std::string_view name;
  Written written = Written::always;
  bool nan_if_absent = false;  // a distance: a line without it reads back as undefined, not 0
  std::string_view key = {};   // the JSON key or CSV column, where it is not `name`

  std::string_view json_key() const { return key.empty() ? name : key; }
};

// Every field of a report, each once: `visit(ReportField, member)`. This list alone drives the
// wire codec, the metrics.jsonl writer and reader, and through them RoundFacts and the figures;
// a test checks it against report.capnp. Adding a field: the member above and its line here.
template <class Report, class Visit>  // Report: RoundReport or const RoundReport
void visit_report_fields(Report& r, Visit&& visit) {
  using W = Written;
  visit(ReportField{"round"}, r.round);
  visit(ReportField{"total_rounds", W::not_in_metrics}, r.total_rounds);
  visit(ReportField{"model_version"}, r.model_version);
  visit(ReportField{"time_start"}, r.time_start);
  visit(ReportField{"time_end"}, r.time_end);
  visit(ReportField{"eligible", W::when_counted}, r.eligible);
  visit(ReportField{"online", W::when_counted}, r.online);
  visit(ReportField{"cohort"}, r.cohort);
  visit(ReportField{"aggregated"}, r.aggregated);
  visit(ReportField{"num_updates"}, r.num_updates);
  visit(ReportField{"finished"}, r.finished);
  visit(ReportField{"late"}, r.late);
  visit(ReportField{"dropped"}, r.dropped);
  visit(ReportField{"failed"}, r.failed);
  visit(ReportField{"staleness"}, r.staleness);
  visit(ReportField{"partial", W::when_counted}, r.partial);
  visit(ReportField{"update_steps", W::when_not_empty}, r.update_steps);
  visit(ReportField{"discarded_samples"}, r.discarded_samples);
  visit(ReportField{"wasted_compute_seconds"}, r.wasted_compute_seconds);
  visit(ReportField{"cohort_tv", W::always, true}, r.cohort_tv);
  visit(ReportField{"cohort_js", W::always, true}, r.cohort_js);
  visit(ReportField{"window_tv", W::always, true}, r.window_tv);
  visit(ReportField{"window_js", W::always, true}, r.window_js);
  visit(ReportField{"change_tv", W::always, true}, r.change_tv);
  visit(ReportField{"change_js", W::always, true}, r.change_js);
  visit(ReportField{"coverage"}, r.coverage);
  visit(ReportField{"participation_bias", W::always, true}, r.participation_bias);
  visit(ReportField{"participation_bias_uniform", W::always, true}, r.participation_bias_uniform);
  visit(ReportField{"samples"}, r.samples);
  visit(ReportField{"train_loss"}, r.train_loss);
  visit(ReportField{"train_accuracy"}, r.train_accuracy);
  visit(ReportField{"evaluated", W::not_in_metrics}, r.evaluated);  // implied by test_accuracy
  visit(ReportField{"test_accuracy", W::when_evaluated}, r.test_accuracy);
  visit(ReportField{"test_loss", W::when_evaluated}, r.test_loss);
  visit(ReportField{"per_class_accuracy", W::when_evaluated}, r.per_class_accuracy);
  visit(ReportField{"client_accuracy", W::when_evaluated_not_empty}, r.client_accuracy);
  visit(ReportField{"client_participations", W::when_evaluated_not_empty}, r.client_participations);
  visit(ReportField{"client_summary", W::not_in_metrics}, r.client_summary);  // implied by its object
  visit(ReportField{"client_accuracy_mean", W::with_client_summary, true, "mean"}, r.client_accuracy_mean);
  visit(ReportField{"client_accuracy_weighted", W::with_client_summary, true, "weighted"}, r.client_accuracy_weighted);
  visit(ReportField{"client_accuracy_p10", W::with_client_summary, true, "p10"}, r.client_accuracy_p10);
  visit(ReportField{"client_accuracy_worst", W::with_client_summary, true, "worst"}, r.client_accuracy_worst);
  visit(ReportField{"client_participation_correlation", W::with_client_summary, true, "participation_correlation"},
        r.client_participation_correlation);
  visit(ReportField{"client_accuracy_held_out", W::with_client_summary, true, "held_out"}, r.client_accuracy_held_out);
  visit(ReportField{"held_out_clients", W::when_evaluated_not_empty}, r.held_out_clients);
  visit(ReportField{"domain_accuracy", W::when_evaluated_not_empty}, r.domain_accuracy);
  visit(ReportField{"clients_evaluated", W::when_privately_evaluated}, r.clients_evaluated);
  visit(ReportField{"algorithm", W::when_not_empty}, r.algorithm);
  visit(ReportField{"divergence", W::when_not_empty}, r.divergence);
  visit(ReportField{"update_drift", W::with_shadow_clients, true, "relative_l2"}, r.update_drift);
  visit(ReportField{"update_cosine", W::with_shadow_clients, true, "cosine"}, r.update_cosine);
  visit(ReportField{"shadow_clients", W::with_shadow_clients}, r.shadow_clients);
  visit(ReportField{"shadow_samples", W::with_shadow_clients}, r.shadow_samples);
  visit(ReportField{"bytes_down"}, r.bytes_down);
  visit(ReportField{"bytes_up"}, r.bytes_up);
  visit(ReportField{"dp", W::not_in_metrics}, r.dp);  // implied by the "privacy" object
  visit(ReportField{"dp_clipped", W::with_privacy, false, "clipped"}, r.dp_clipped);
  visit(ReportField{"dp_clip", W::with_privacy, false, "clip"}, r.dp_clip);
  visit(ReportField{"dp_noise_std", W::with_privacy, false, "noise_std"}, r.dp_noise_std);
  visit(ReportField{"dp_epsilon", W::with_privacy, true, "epsilon"}, r.dp_epsilon);
  visit(ReportField{"dp_epsilon_amplified", W::with_privacy, true, "epsilon_amplified"}, r.dp_epsilon_amplified);
  visit(ReportField{"dp_epsilon_max_client", W::with_privacy, true, "epsilon_max_client"}, r.dp_epsilon_max_client);
  visit(ReportField{"sa", W::not_in_metrics}, r.sa);  // implied by the "secure_aggregation" object
  visit(ReportField{"sa_survivors", W::with_secure_aggregation, false, "survivors"}, r.sa_survivors);
  visit(ReportField{"sa_threshold", W::with_secure_aggregation, false, "threshold"}, r.sa_threshold);
  visit(ReportField{"sa_shares", W::with_secure_aggregation, false, "shares"}, r.sa_shares);
  visit(ReportField{"sa_aborted", W::with_secure_aggregation, false, "aborted"}, r.sa_aborted);
  visit(ReportField{"sa_abort_stage", W::with_secure_aggregation, false, "abort_stage"}, r.sa_abort_stage);
  visit(ReportField{"sa_abort_reason", W::with_secure_aggregation, false, "abort_reason"}, r.sa_abort_reason);
  visit(ReportField{"sa_seconds", W::with_secure_aggregation, false, "seconds"}, r.sa_seconds);
  visit(ReportField{"sa_extra_seconds", W::with_secure_aggregation, false, "extra_seconds"}, r.sa_extra_seconds);
  visit(ReportField{"sa_bytes_up", W::with_secure_aggregation, false, "bytes_up"}, r.sa_bytes_up);
  visit(ReportField{"sa_bytes_down", W::with_secure_aggregation, false, "bytes_down"}, r.sa_bytes_down);
  visit(ReportField{"sa_overflows", W::with_secure_aggregation, false, "overflow_count"}, r.sa_overflows);
  visit(ReportField{"sa_clipped_coords", W::with_secure_aggregation, false, "clipped_coords"}, r.sa_clipped_coords);
  visit(ReportField{"sa_quantization_mse", W::with_secure_aggregation, true, "quantization_mse"},
        r.sa_quantization_mse);
  visit(ReportField{"edges_sampled", W::with_edges, false, "sampled"}, r.edges_sampled);
  visit(ReportField{"edges_reported", W::with_edges, false, "reported"}, r.edges_reported);
  visit(ReportField{"edges_idle", W::with_edges, false, "idle"}, r.edges_idle);
  visit(ReportField{"edges_late", W::with_edges, false, "late"}, r.edges_late);
  visit(ReportField{"edges_lost", W::with_edges, false, "lost"}, r.edges_lost);
  visit(ReportField{"edge_updates", W::with_edges, false, "updates"}, r.edge_updates);
  visit(ReportField{"edge_weight", W::with_edges, false, "weight"}, r.edge_weight);
  visit(ReportField{"edge_arrival", W::with_edges, false, "arrival"}, r.edge_arrival);
  visit(ReportField{"edge_cohort_tv", W::with_edges, false, "cohort_tv"}, r.edge_cohort_tv);
  visit(ReportField{"edge_rounds_run", W::with_edges, false, "rounds_run"}, r.edge_rounds_run);
  visit(ReportField{"edge_busy_seconds", W::with_edges, false, "busy_seconds"}, r.edge_busy_seconds);
  visit(ReportField{"edge_staleness", W::with_buffered_edges, false, "staleness"}, r.edge_staleness);
  visit(ReportField{"edge_clients", W::with_moving_clients, false, "clients"}, r.edge_clients);
  visit(ReportField{"edge_algorithm", W::with_edge_algorithm, false, "algorithm"}, r.edge_algorithm);
  visit(ReportField{"edge_reported_tv", W::with_edges, true, "reported_tv"}, r.edge_reported_tv);
  visit(ReportField{"edge_participation_bias", W::with_edges, true, "participation_bias"}, r.edge_participation_bias);
  visit(ReportField{"edge_bytes_up", W::with_edges, false, "bytes_up"}, r.edge_bytes_up);
  visit(ReportField{"edge_bytes_down", W::with_edges, false, "bytes_down"}, r.edge_bytes_down);
  visit(ReportField{"clients", W::not_in_metrics}, r.clients);                        // clients.csv
  visit(ReportField{"wall_train_seconds", W::not_in_metrics}, r.wall_train_seconds);  // timings.jsonl
  visit(ReportField{"wall_eval_seconds", W::not_in_metrics}, r.wall_eval_seconds);
}

// Every field of a client record, in the order of clients.csv's columns (after "round").
template <class Record, class Visit>  // Record: ClientRecord or const ClientRecord
void visit_client_fields(Record& c, Visit&& visit) {
  visit(ReportField{"client_id", Written::always, false, "client"}, c.client_id);
  visit(ReportField{"event"}, c.event);
  visit(ReportField{"time"}, c.time);
  visit(ReportField{"num_samples"}, c.num_samples);
  visit(ReportField{"train_loss"}, c.train_loss);
  visit(ReportField{"steps"}, c.steps);
  visit(ReportField{"bytes_down"}, c.bytes_down);
  visit(ReportField{"bytes_up"}, c.bytes_up);
  visit(ReportField{"staleness"}, c.staleness);
  visit(ReportField{"detail"}, c.detail);
}

}  // namespace drift
