#include "engine/sim/drift_metrics.hpp"

#include "engine/population/population.hpp"

#include <cmath>

namespace drift {

double total_variation(const std::vector<double>& p, const std::vector<double>& q) {
  double sum = 0.0;
  for (std::size_t i = 0; i < p.size() && i < q.size(); ++i) sum += std::abs(p[i] - q[i]);
  return 0.5 * sum;
}

double jensen_shannon_distance(const std::vector<double>& p, const std::vector<double>& q) {
  auto kl_to_mixture = [](double a, double m) { return a > 0.0 ? a * std::log2(a / m) : 0.0; };
  double js = 0.0;
  for (std::size_t i = 0; i < p.size() && i < q.size(); ++i) {
    const double m = 0.5 * (p[i] + q[i]);
    js += 0.5 * kl_to_mixture(p[i], m) + 0.5 * kl_to_mixture(q[i], m);
  }
  return std::sqrt(std::max(0.0, js));
}

std::vector<double> label_counts(const Population& p, const std::vector<std::uint32_t>& clients) {
  if (p.histograms.empty()) return {};
  std::vector<double> counts(p.label_distribution.size(), 0.0);
  for (auto c : clients)
    for (std::size_t k = 0; k < counts.size(); ++k) counts[k] += static_cast<double>(p.histograms[c][k]);
  return counts;
}

std::vector<double> normalised(const std::vector<double>& counts) {
  double total = 0.0;
  for (double c : counts) total += c;
  std::vector<double> out(counts.size(), 0.0);
  if (total > 0)
    for (std::size_t i = 0; i < counts.size(); ++i) out[i] = counts[i] / total;
  return out;
}

void DriftWindow::push(std::vector<double> counts) {
  entries_.push_back(std::move(counts));
  while (entries_.size() > window_) entries_.pop_front();
}

std::vector<double> DriftWindow::sum() const {
  std::vector<double> total;
  for (const auto& e : entries_) {
    if (total.size() < e.size()) total.resize(e.size(), 0.0);
    for (std::size_t i = 0; i < e.size(); ++i) total[i] += e[i];
  }
  return total;
}

void DriftWindow::archive(StateArchive& ar) {
  std::vector<std::vector<double>> entries(entries_.begin(), entries_.end());
  ar.vector(entries, [&](std::vector<double>& e) { ar.values(e); });
  if (ar.loading()) entries_.assign(entries.begin(), entries.end());
}

ParticipationBias::ParticipationBias(const std::vector<std::uint64_t>& num_samples, std::size_t window)
    : window_(window), uniform_(num_samples.size(), num_samples.empty() ? 0.0 : 1.0 / num_samples.size()) {
  std::vector<double> counts(num_samples.begin(), num_samples.end());
  data_weights_ = normalised(counts);
}

void ParticipationBias::push(ClientShares shares) {
  entries_.push_back(std::move(shares));
  while (entries_.size() > window_) entries_.pop_front();
}

// Summed afresh each time (O(window |S| + N)), so the value never depends on how the window got here.
double ParticipationBias::distance(const std::vector<double>& objective) const {
  std::vector<double> given(objective.size(), 0.0);
  for (const auto& shares : entries_)
    for (const auto& [client, share] : shares)
      if (client < given.size()) given[client] += share;
  double total = 0.0;
  for (double g : given) total += g;
  if (!(total > 0.0)) return std::nan("");
  for (auto& g : given) g /= total;
  return total_variation(given, objective);
}

void ParticipationBias::archive(StateArchive& ar) {
  std::vector<ClientShares> entries(entries_.begin(), entries_.end());
  ar.vector(entries, [&](ClientShares& shares) {
    ar.vector(shares, [&](std::pair<std::uint32_t, double>& s) {
      ar.value(s.first);
      ar.value(s.second);
    });
  });
  if (ar.loading()) entries_.assign(entries.begin(), entries.end());
}

}  // namespace drift
