#pragma once
// How far a cohort's label distribution is from the population's: the measure of sampling drift.
#include <cstdint>
#include <deque>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

// 0.5 * sum |p - q|, in [0, 1].
double total_variation(const std::vector<double>& p, const std::vector<double>& q);
// sqrt of the Jensen-Shannon divergence with base-2 logs, in [0, 1].
double jensen_shannon_distance(const std::vector<double>& p, const std::vector<double>& q);
// counts / sum(counts); all zeros if the sum is zero.
std::vector<double> normalised(const std::vector<double>& counts);

struct Population;
// The label counts of `clients`, summed in their order (a repeated client counts again); empty
// where the population has no label histograms.
std::vector<double> label_counts(const Population& population, const std::vector<std::uint32_t>& clients);

// Label counts of the last `window` aggregations, summed.
class DriftWindow {
 public:
  explicit DriftWindow(std::size_t window) : window_(window) {}
  void push(std::vector<double> counts);
  std::vector<double> sum() const;
  void archive(StateArchive& ar);

 private:
  std::size_t window_;
  std::deque<std::vector<double>> entries_;
};

// Participation bias (docs/outputs.md#participation-bias): the shares the last `window`
// aggregations gave each client (ServerAlgorithm::shares), summed and normalised, against the
// weights of the population objective, as a total variation in [0, 1]. Its cost is the window's
// shares, not the population: a client the window gave nothing adds its objective weight.
class ParticipationBias {
 public:
  // `num_samples`: each client's training samples, which give the objective sum_i n_i / n F_i.
  ParticipationBias(const std::vector<std::uint64_t>& num_samples, std::size_t window);
  void push(ClientShares shares);  // one aggregation's, empty when it gave nobody a share
  // Against n_i / n, and against 1 / N (the objective of the participation papers); NaN while
  // the window holds no positive share.
  double against_samples() const;
  double against_uniform() const;
  void archive(StateArchive& ar);

 private:
  struct Given {
    std::uint32_t client;
    double share;        // normalised over the window
    double data_weight;  // n_i / n
  };
  // One aggregation's shares, each with its client's n_i / n (read once, when pushed).
  struct Entry {
    ClientShares shares;
    std::vector<double> data_weights;
  };
  Entry entry(ClientShares shares) const;
  // Each client the window gave a share, ascending; empty when the shares sum to nothing.
  // Summed afresh from the window whenever it changes.
  void sum_window();
  template <class Weight>
  double distance(const Weight& objective, double objective_sum) const;

  std::size_t window_, clients_;
  std::vector<double> data_weights_;
  double uniform_weight_, data_weights_sum_, uniform_sum_;
  std::deque<Entry> entries_;
  std::vector<Given> given_;
};

}  // namespace drift
