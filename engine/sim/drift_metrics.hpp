#pragma once
// How far a cohort's label distribution is from the population's: the measure of sampling drift.
#include <cstdint>
#include <deque>
#include <vector>

#include "engine/core/state_archive.hpp"

namespace drift {

// 0.5 * sum |p - q|, in [0, 1].
double total_variation(const std::vector<double>& p, const std::vector<double>& q);
// sqrt of the Jensen-Shannon divergence with base-2 logs, in [0, 1].
double jensen_shannon_distance(const std::vector<double>& p, const std::vector<double>& q);
// counts / sum(counts); all zeros if the sum is zero.
std::vector<double> normalised(const std::vector<double>& counts);

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

}  // namespace drift
