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
  std::string detail;
};

ClientRecord eligible_record(std::uint32_t client, double time);
ClientRecord selected_record(std::uint32_t client, double time, std::uint64_t bytes_down);
// An update that arrived: `event` is finished, late or stale.
ClientRecord arrival_record(ClientEvent event, std::uint32_t client, double time, std::uint64_t samples, double loss,
                            std::uint64_t bytes_up, std::uint64_t staleness, std::string detail);
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
  std::uint64_t discarded_samples = 0;   // trained, then thrown away (late or dropped)
  double wasted_compute_seconds = 0.0;   // virtual compute time of discarded and dropped work
  double cohort_tv = 0.0, cohort_js = 0.0, window_tv = 0.0, window_js = 0.0;
  // Sampling drift as FedSKC defines it: how far this aggregation's cohort label distribution
  // moved from the previous one's (NaN when either aggregated nobody).
  double change_tv = 0.0, change_js = 0.0;
  double coverage = 0.0;  // clients aggregated at least once / population
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
  // Multi-domain datasets: accuracy on each domain's test samples, in domain order.
  std::vector<double> domain_accuracy;
  std::uint32_t clients_evaluated = 0;
  AlgorithmMetrics algorithm;  // the server half's named values of this aggregation
  std::string divergence;      // why this aggregation counts as diverged; empty if it does not
  // simulation.shadow_clients: the cohort's aggregate update against the population's
  // estimate (NaN when not measured), and what the shadow training cost.
  double update_drift = 0.0, update_cosine = 0.0;
  std::uint32_t shadow_clients = 0;
  std::uint64_t shadow_samples = 0;
  std::uint64_t bytes_down = 0;
  std::uint64_t bytes_up = 0;
  std::vector<ClientRecord> clients;
  // Wall-clock seconds: reported in timings.jsonl only, so metrics.jsonl stays comparable.
  double wall_train_seconds = 0.0;
  double wall_eval_seconds = 0.0;
};

}  // namespace drift
