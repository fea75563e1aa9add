#pragma once
// Per-client evaluation of the global model (evaluation.per_client; docs/outputs.md#per-client-
// accuracy): every client's held-out split scored with the model the server holds, and what the
// population of those accuracies says about who the model serves: their mean, the mean weighted
// by held-out samples (the pooled accuracy), the 10th percentile, the worst, and how they go with
// each client's empirical participation rate so far.
#include <cstdint>
#include <vector>

#include "engine/metrics/evaluation.hpp"

namespace drift {

struct ClientAccuracySummary {
  double mean = 0.0;      // over the clients with held-out samples
  double weighted = 0.0;  // by held-out samples
  double p10 = 0.0;       // 10th percentile, linear between order statistics (numpy's default)
  double worst = 0.0;
  // Pearson's correlation of accuracy with participation rate; NaN where either is constant.
  double participation_correlation = 0.0;
  // The mean over held-out clients (federation.held_out), who are left out of the figures above;
  // NaN when there are none.
  double held_out = 0.0;
};

// Each client's hits on its held-out samples [starts[i], starts[i + 1]) of the test set, from
// range results that carry per-sample hits and together cover the test set.
std::vector<std::uint64_t> hits_per_client(const std::vector<EvalResult>& parts,
                                           const std::vector<std::uint64_t>& starts);

// Accuracy per client (NaN for a client without held-out samples).
std::vector<double> client_accuracies(const std::vector<std::uint64_t>& hits, const std::vector<std::uint64_t>& starts);

// The summary over the clients with held-out samples; `rates` holds each client's participation
// rate, `held_out` (by client; empty: none) the clients that never take part, summarised apart.
// A figure is NaN when no client it covers has held-out samples.
ClientAccuracySummary summarize_client_accuracy(const std::vector<std::uint64_t>& hits,
                                                const std::vector<std::uint64_t>& starts,
                                                const std::vector<double>& rates,
                                                const std::vector<char>& held_out = {});

// The q-th quantile (0..1) of `values`, linear between order statistics; NaN when empty.
double quantile(std::vector<double> values, double q);

// Pearson's correlation of x and y; NaN when either is constant or they have under 2 entries.
double pearson(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace drift
