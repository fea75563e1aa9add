#include "engine/sim/drift_metrics.hpp"

#include "engine/population/population.hpp"

#include <algorithm>
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

namespace {

// A sum carried in two doubles (Knuth's TwoSum), so that adding and removing the window's
// clients from the population's total loses nothing a double would show.
struct CompensatedSum {
  double high = 0.0, low = 0.0;
  void add(double x) {
    const double s = high + x, back = s - high;
    low += (high - (s - back)) + (x - back);
    high = s;
  }
  double value() const { return high + low; }
};

}  // namespace

ParticipationBias::ParticipationBias(const std::vector<std::uint64_t>& num_samples, std::size_t window)
    : window_(window),
      clients_(num_samples.size()),
      uniform_weight_(num_samples.empty() ? 0.0 : 1.0 / static_cast<double>(num_samples.size())) {
  std::vector<double> counts(num_samples.begin(), num_samples.end());
  data_weights_ = normalised(counts);
  CompensatedSum data, uniform;
  for (double w : data_weights_) data.add(w);
  for (std::size_t i = 0; i < clients_; ++i) uniform.add(uniform_weight_);
  data_weights_sum_ = data.value();
  uniform_sum_ = uniform.value();
}

void ParticipationBias::push(ClientShares shares) {
  entries_.push_back(std::move(shares));
  while (entries_.size() > window_) entries_.pop_front();
}

// Summed afresh from the window each time, so the value never depends on how the window got
// here; a client's shares add up in the window's order.
std::vector<std::pair<std::uint32_t, double>> ParticipationBias::given() const {
  std::vector<std::pair<std::uint32_t, double>> all;
  for (const auto& shares : entries_)
    for (const auto& s : shares)
      if (s.first < clients_) all.push_back(s);
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<std::uint32_t, double>> given;
  for (const auto& [client, share] : all) {
    if (given.empty() || given.back().first != client)
      given.emplace_back(client, share);
    else
      given.back().second += share;
  }
  double total = 0.0;
  for (const auto& g : given) total += g.second;
  if (!(total > 0.0)) return {};
  for (auto& g : given) g.second /= total;
  return given;
}

// 2 TV = sum_i |g_i - w_i| = sum_i w_i + sum over the window's clients of (|g_i - w_i| - w_i).
template <class Weight>
double ParticipationBias::distance(const Weight& objective, double objective_sum) const {
  const auto shares = given();
  if (shares.empty()) return std::nan("");
  CompensatedSum sum;
  sum.add(objective_sum);
  for (const auto& [client, g] : shares) {
    const double w = objective(client);
    sum.add(std::abs(g - w));
    sum.add(-w);
  }
  return 0.5 * sum.value();
}

double ParticipationBias::against_samples() const {
  return distance([this](std::uint32_t c) { return data_weights_[c]; }, data_weights_sum_);
}

double ParticipationBias::against_uniform() const {
  return distance([this](std::uint32_t) { return uniform_weight_; }, uniform_sum_);
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
