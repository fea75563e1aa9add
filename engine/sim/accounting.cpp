#include "engine/sim/accounting.hpp"

#include <cmath>

#include "engine/sim/round_rules.hpp"

namespace drift {

Accounting::Accounting(const Scenario& scenario, const Population& population, bool log_eligible)
    : scenario_(scenario),
      population_(population),
      log_eligible_(log_eligible),
      participation_(population.size(), 0),
      window_(static_cast<std::size_t>(scenario.simulation.drift_window)),
      bias_(population.num_samples, static_cast<std::size_t>(scenario.simulation.drift_window)) {}

void Accounting::account(RoundReport& r, const std::vector<std::uint32_t>& aggregated, ClientShares shares) {
  r.aggregated = aggregated;
  bias_.push(std::move(shares));
  r.participation_bias = bias_.against_samples();
  r.participation_bias_uniform = bias_.against_uniform();
  for (auto c : aggregated)
    if (participation_[c]++ == 0) ++participants_;
  auto counts = label_counts(population_, aggregated);
  r.coverage = population_.size() ? static_cast<double>(participants_) / population_.size() : 0.0;
  if (per_client_due(scenario_, r.round)) r.client_participations = participation_;
  if (counts.empty()) return;
  const auto& population = population_.label_distribution;
  r.change_tv = r.change_js = std::nan("");  // undefined (null in JSON) until two cohorts exist
  if (!aggregated.empty()) {
    auto cohort = normalised(counts);
    r.cohort_tv = total_variation(cohort, population);
    r.cohort_js = jensen_shannon_distance(cohort, population);
    if (!previous_cohort_.empty()) {
      r.change_tv = total_variation(cohort, previous_cohort_);
      r.change_js = jensen_shannon_distance(cohort, previous_cohort_);
    }
    previous_cohort_ = std::move(cohort);
  } else {
    r.cohort_tv = r.cohort_js = std::nan("");  // nothing aggregated: undefined
  }
  window_.push(std::move(counts));
  const auto windowed = normalised(window_.sum());
  r.window_tv = total_variation(windowed, population);
  r.window_js = jensen_shannon_distance(windowed, population);
}

void Accounting::record_online(RoundReport& r, double t, Roster& roster) const {
  if (!log_eligible_) return;
  r.online = 0;
  for (std::uint32_t c = 0; c < population_.size(); ++c)
    if (roster.presence().present(c, t) && roster.availability().online(c, t)) ++r.online;
}

void Accounting::record_eligible(RoundReport& r, double t, Roster& roster) const {
  if (!log_eligible_) return;
  record_online(r, t, roster);
  r.eligible = 0;
  for (std::uint32_t c = 0; c < population_.size(); ++c) {
    if (!roster.eligible(c, t)) continue;
    ++r.eligible;
    r.clients.push_back(eligible_record(c, t));
    // The sampler may pick an offline client (who then drops); the row says who is offline.
    if (!roster.availability().online(c, t)) r.clients.back().detail = "offline";
  }
}

void Accounting::add_training_metrics(RoundReport& r, const std::vector<ClientUpdate>& updates) {
  // Sums over the report's earlier calls too (the edge rounds of a cloud round); a first call's
  // sums start from 0 * 0, which leaves its means exactly as a single call computes them.
  const auto before = static_cast<double>(r.samples);
  double loss = r.train_loss * before, accuracy = r.train_accuracy * before;
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

void Accounting::archive(StateArchive& ar) {
  ar.section("accounting");
  ar.values(participation_);
  ar.value(participants_);
  window_.archive(ar);
  bias_.archive(ar);
  ar.values(previous_cohort_);
  if (participation_.size() != population_.size())
    throw DecodeError("a checkpoint's accounting is for another population");
}

}  // namespace drift
