#include "engine/metrics/summary.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

namespace drift {
namespace {

// Mean of the finite values; NaN when there are none.
class FiniteMean {
 public:
  void add(double v) {
    if (!std::isfinite(v)) return;
    sum_ += v;
    ++n_;
  }
  double value() const { return n_ ? sum_ / static_cast<double>(n_) : std::nan(""); }

 private:
  double sum_ = 0.0;
  std::size_t n_ = 0;
};

void add_totals(RunSummary& s, const RoundFacts& r) {
  s.updates += r.num_updates;
  s.finished += r.finished;
  s.late += r.late;
  s.dropped += r.dropped;
  s.failed += r.failed;
  s.discarded_samples += r.discarded_samples;
  s.wasted_compute_seconds += r.wasted_compute_seconds;
  if (!r.divergence.empty() && !s.diverged_round) {
    s.diverged_round = r.round;
    s.divergence = r.divergence;
  }
}

void add_evaluation(RunSummary& s, const RoundFacts& e) {
  ++s.evaluations;
  if (s.evaluations == 1 || e.accuracy > s.best_accuracy) {
    s.best_accuracy = e.accuracy;
    s.best_round = e.round;
  }
  for (auto& [target, first] : s.rounds_to)
    if (!first && e.accuracy >= target) first = e.round;
  for (auto& [target, first] : s.time_to)
    if (!first && e.accuracy >= target) first = e.time_end;
  for (auto& [budget, accuracy] : s.accuracy_at)
    if (e.time_end <= budget) accuracy = e.accuracy;
  s.final_accuracy = e.accuracy;
  s.final_loss = e.loss;
}

}  // namespace

RoundFacts facts_of(const RoundReport& r) {
  RoundFacts f;
  f.round = r.round;
  f.time_end = r.time_end;
  f.num_updates = r.num_updates;
  f.finished = r.finished;
  f.late = r.late;
  f.dropped = r.dropped;
  f.failed = r.failed;
  f.discarded_samples = r.discarded_samples;
  f.wasted_compute_seconds = r.wasted_compute_seconds;
  f.cohort_tv = r.cohort_tv;
  f.cohort_js = r.cohort_js;
  f.change_tv = r.change_tv;
  f.change_js = r.change_js;
  f.update_drift = r.shadow_clients > 0 ? r.update_drift : std::nan("");
  f.participation_bias = r.participation_bias;
  f.participation_bias_uniform = r.participation_bias_uniform;
  f.evaluated = r.evaluated;
  f.accuracy = r.test_accuracy;
  f.loss = r.test_loss;
  f.divergence = r.divergence;
  f.dp = r.dp;
  f.dp_epsilon = r.dp_epsilon;
  f.dp_epsilon_amplified = r.dp_epsilon_amplified;
  f.dp_epsilon_max_client = r.dp_epsilon_max_client;
  f.sa = r.sa;
  f.sa_aborted = r.sa_aborted;
  f.sa_seconds = r.sa_seconds;
  f.sa_extra_seconds = r.sa_extra_seconds;
  f.sa_bytes = r.sa_bytes_up + r.sa_bytes_down;
  f.sa_overflows = r.sa_overflows;
  return f;
}

RunSummary summarize(const std::vector<RoundFacts>& rounds, const SummaryTargets& targets) {
  RunSummary s;
  for (double t : targets.accuracies) {
    s.rounds_to.emplace_back(t, std::nullopt);
    s.time_to.emplace_back(t, std::nullopt);
  }
  for (double t : targets.times) s.accuracy_at.emplace_back(t, std::nullopt);
  FiniteMean tv, js, change_tv, change_js, update_drift, bias, bias_uniform;
  std::vector<double> accuracies;
  for (const auto& r : rounds) {
    s.rounds = std::max(s.rounds, r.round);
    s.virtual_time = std::max(s.virtual_time, r.time_end);
    add_totals(s, r);
    tv.add(r.cohort_tv);
    js.add(r.cohort_js);
    change_tv.add(r.change_tv);
    change_js.add(r.change_js);
    update_drift.add(r.update_drift);
    bias.add(r.participation_bias);
    bias_uniform.add(r.participation_bias_uniform);
    if (r.dp) {
      s.epsilon = r.dp_epsilon;
      s.epsilon_amplified = r.dp_epsilon_amplified;
      s.epsilon_max_client = r.dp_epsilon_max_client;
    }
    if (r.sa) {
      ++s.secagg_rounds;
      s.secagg_aborted += r.sa_aborted ? 1 : 0;
      s.secagg_seconds += r.sa_seconds;
      s.secagg_extra_seconds += r.sa_extra_seconds;
      s.secagg_bytes += r.sa_bytes;
      s.secagg_overflows += r.sa_overflows;
    }
    if (!r.evaluated) continue;
    add_evaluation(s, r);
    accuracies.push_back(r.accuracy);
  }
  s.mean_cohort_tv = tv.value();
  s.mean_cohort_js = js.value();
  s.mean_change_tv = change_tv.value();
  s.mean_change_js = change_js.value();
  s.mean_update_drift = update_drift.value();
  s.mean_participation_bias = bias.value();
  s.mean_participation_bias_uniform = bias_uniform.value();
  if (!accuracies.empty()) {
    const std::size_t k = std::min<std::size_t>(5, accuracies.size());
    double sum = 0.0;
    for (std::size_t i = accuracies.size() - k; i < accuracies.size(); ++i) sum += accuracies[i];
    s.last5_mean_accuracy = sum / static_cast<double>(k);
  }
  return s;
}

std::optional<RunStatus> read_run_status(const std::filesystem::path& run_dir) {
  std::ifstream in(run_dir / "summary.json");
  if (!in) return std::nullopt;
  const auto summary = nlohmann::json::parse(in, nullptr, false);
  if (!summary.is_object() || !summary.contains("status") || !summary["status"].is_string()) return std::nullopt;
  return run_status_named(summary["status"].get<std::string>());
}

}  // namespace drift
