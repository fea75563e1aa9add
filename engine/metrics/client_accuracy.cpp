#include "engine/metrics/client_accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace drift {
namespace {

constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();

std::uint64_t split_size(const std::vector<std::uint64_t>& starts, std::size_t client) {
  return starts[client + 1] - starts[client];
}

}  // namespace

std::vector<std::uint64_t> hits_per_client(const std::vector<EvalResult>& parts,
                                           const std::vector<std::uint64_t>& starts) {
  if (starts.empty()) return {};
  std::vector<std::uint64_t> hits(starts.size() - 1, 0);
  for (const auto& part : parts) {
    if (part.hits.size() != part.end - part.begin)
      throw std::logic_error("an evaluation range came back without its per-sample hits");
    // The client whose split holds the range's first sample, then onward through the range.
    auto client = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), part.begin) - starts.begin());
    for (std::uint64_t i = part.begin; i < part.end; ++i) {
      while (client < starts.size() && starts[client] <= i) ++client;
      if (client == 0 || client >= starts.size())
        throw std::logic_error("a test sample lies outside every client's split");
      hits[client - 1] += part.hits[i - part.begin];
    }
  }
  return hits;
}

std::vector<double> client_accuracies(const std::vector<std::uint64_t>& hits,
                                      const std::vector<std::uint64_t>& starts) {
  std::vector<double> out(hits.size(), kUndefined);
  for (std::size_t c = 0; c < hits.size(); ++c)
    if (const auto n = split_size(starts, c); n > 0) out[c] = static_cast<double>(hits[c]) / static_cast<double>(n);
  return out;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return kUndefined;
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const auto above = std::min(below + 1, values.size() - 1);
  return values[below] + (at - static_cast<double>(below)) * (values[above] - values[below]);
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const auto n = x.size();
  if (n < 2 || y.size() != n) return kUndefined;
  double mx = 0.0, my = 0.0;
  for (std::size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0.0, sxx = 0.0, syy = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0.0 || syy == 0.0) return kUndefined;
  return sxy / std::sqrt(sxx * syy);
}

ClientAccuracySummary summarize_client_accuracy(const std::vector<std::uint64_t>& hits,
                                                const std::vector<std::uint64_t>& starts,
                                                const std::vector<double>& rates, const std::vector<char>& held_out) {
  const auto accuracy = client_accuracies(hits, starts);
  std::vector<double> kept, kept_rates;
  std::uint64_t right = 0, samples = 0;
  double held_out_total = 0.0;
  std::size_t held_out_count = 0;
  for (std::size_t c = 0; c < accuracy.size(); ++c) {
    if (std::isnan(accuracy[c])) continue;
    if (c < held_out.size() && held_out[c]) {
      held_out_total += accuracy[c];
      ++held_out_count;
      continue;
    }
    kept.push_back(accuracy[c]);
    kept_rates.push_back(c < rates.size() ? rates[c] : kUndefined);
    right += hits[c];
    samples += split_size(starts, c);
  }
  ClientAccuracySummary s;
  s.held_out = held_out_count ? held_out_total / static_cast<double>(held_out_count) : kUndefined;
  if (kept.empty()) return {kUndefined, kUndefined, kUndefined, kUndefined, kUndefined, s.held_out};
  double total = 0.0;
  for (double a : kept) total += a;
  s.mean = total / static_cast<double>(kept.size());
  s.weighted = static_cast<double>(right) / static_cast<double>(samples);
  s.p10 = quantile(kept, 0.1);
  s.worst = *std::min_element(kept.begin(), kept.end());
  s.participation_correlation = pearson(kept, kept_rates);
  return s;
}

}  // namespace drift
