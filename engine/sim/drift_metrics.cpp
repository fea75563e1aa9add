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

ParticipationBias::Entry ParticipationBias::entry(ClientShares shares) const {
  Entry e{std::move(shares), {}};
  for (const auto& s : e.shares) e.data_weights.push_back(s.first < clients_ ? data_weights_[s.first] : 0.0);
  return e;
}

void ParticipationBias::push(ClientShares shares) {
  entries_.push_back(entry(std::move(shares)));
  while (entries_.size() > window_) entries_.pop_front();
  sum_window();
}

// A client's shares add up in the window's order, so the value never depends on how the window
// got here.
void ParticipationBias::sum_window() {
  std::vector<Given> all;
  for (const auto& e : entries_)
    for (std::size_t i = 0; i < e.shares.size(); ++i)
      if (e.shares[i].first < clients_) all.push_back({e.shares[i].first, e.shares[i].second, e.data_weights[i]});
  std::stable_sort(all.begin(), all.end(), [](const Given& a, const Given& b) { return a.client < b.client; });
  given_.clear();
  for (const auto& g : all) {
    if (given_.empty() || given_.back().client != g.client)
      given_.push_back(g);
    else
      given_.back().share += g.share;
  }
  double total = 0.0;
  for (const auto& g : given_) total += g.share;
  if (!(total > 0.0)) given_.clear();
  for (auto& g : given_) g.share /= total;
}

// 2 TV = sum_i |g_i - w_i| = sum_i w_i + sum over the window's clients of (|g_i - w_i| - w_i).
template <class Weight>
double ParticipationBias::distance(const Weight& objective, double objective_sum) const {
  if (given_.empty()) return std::nan("");
  CompensatedSum sum;
  sum.add(objective_sum);
  for (const auto& g : given_) {
    const double w = objective(g);
    sum.add(std::abs(g.share - w));
    sum.add(-w);
  }
  return 0.5 * sum.value();
}

double ParticipationBias::against_samples() const {
  return distance([](const Given& g) { return g.data_weight; }, data_weights_sum_);
}

double ParticipationBias::against_uniform() const {
  return distance([this](const Given&) { return uniform_weight_; }, uniform_sum_);
}

void ParticipationBias::archive(StateArchive& ar) {
  std::vector<ClientShares> entries;
  for (const auto& e : entries_) entries.push_back(e.shares);
  ar.vector(entries, [&](ClientShares& shares) {
    ar.vector(shares, [&](std::pair<std::uint32_t, double>& s) {
      ar.value(s.first);
      ar.value(s.second);
    });
  });
  if (!ar.loading()) return;
  entries_.clear();
  for (auto& shares : entries) entries_.push_back(entry(std::move(shares)));
  sum_window();
}

}  // namespace drift
