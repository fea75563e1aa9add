#include "engine/sim/accounting.hpp"

#include <cmath>

namespace drift {

Accounting::Accounting(const Scenario& scenario, const Population& population, bool log_eligible)
    : population_(population),
      log_eligible_(log_eligible),
      participation_(population.size(), 0),
      window_(static_cast<std::size_t>(scenario.simulation.drift_window)) {}

void Accounting::account(RoundReport& r, const std::vector<std::uint32_t>& aggregated) {
  r.aggregated = aggregated;
  std::vector<double> counts(population_.label_distribution.size(), 0.0);
  for (auto c : aggregated) {
    if (participation_[c]++ == 0) ++participants_;
    if (!population_.histograms.empty())
      for (std::size_t k = 0; k < counts.size(); ++k) counts[k] += static_cast<double>(population_.histograms[c][k]);
  }
  r.coverage = population_.size() ? static_cast<double>(participants_) / population_.size() : 0.0;
  if (counts.empty()) return;
  const auto& population = population_.label_distribution;
  if (!aggregated.empty()) {
    const auto cohort = normalised(counts);
    r.cohort_tv = total_variation(cohort, population);
    r.cohort_js = jensen_shannon_distance(cohort, population);
  } else {
    r.cohort_tv = r.cohort_js = std::nan("");  // nothing aggregated: undefined (null in JSON)
  }
  window_.push(std::move(counts));
  const auto windowed = normalised(window_.sum());
  r.window_tv = total_variation(windowed, population);
  r.window_js = jensen_shannon_distance(windowed, population);
}

void Accounting::record_eligible(RoundReport& r, double t, const Roster& roster) const {
  if (!log_eligible_) return;
  r.eligible = 0;
  for (std::uint32_t c = 0; c < population_.size(); ++c) {
    if (!roster.eligible(c, t)) continue;
    ++r.eligible;
    r.clients.push_back(eligible_record(c, t));
  }
}

void Accounting::add_training_metrics(RoundReport& r, const std::vector<ClientUpdate>& updates) {
  double loss = 0.0, accuracy = 0.0;
  for (const auto& u : updates) {
    r.samples += u.num_samples;
    loss += u.metrics.loss * static_cast<double>(u.num_samples);
    accuracy += u.metrics.accuracy * static_cast<double>(u.num_samples);
  }
  if (r.samples > 0) {
    r.train_loss = loss / static_cast<double>(r.samples);
    r.train_accuracy = accuracy / static_cast<double>(r.samples);
  }
}

}  // namespace drift
