#include "engine/metrics/evaluation.hpp"

#include <algorithm>

namespace drift {

Evaluation combine_evaluations(const std::vector<EvalResult>& parts, std::int64_t num_classes) {
  std::vector<std::uint64_t> correct(static_cast<std::size_t>(num_classes), 0), count(correct);
  double loss_sum = 0.0;
  for (const auto& p : parts) {
    loss_sum += p.loss_sum;
    for (std::size_t c = 0; c < correct.size() && c < p.correct.size(); ++c) {
      correct[c] += p.correct[c];
      count[c] += p.count[c];
    }
  }
  Evaluation e;
  std::uint64_t total_correct = 0, total = 0;
  for (std::size_t c = 0; c < correct.size(); ++c) {
    total_correct += correct[c];
    total += count[c];
    e.per_class_accuracy.push_back(count[c] ? static_cast<double>(correct[c]) / static_cast<double>(count[c]) : 0.0);
  }
  e.accuracy = total ? static_cast<double>(total_correct) / static_cast<double>(total) : 0.0;
  e.loss = total ? loss_sum / static_cast<double>(total) : 0.0;
  return e;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> evaluation_chunks(std::uint64_t n, std::uint64_t chunk,
                                                                       const std::vector<std::uint64_t>& boundaries) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  std::vector<std::uint64_t> cuts = boundaries;
  cuts.push_back(n);
  std::sort(cuts.begin(), cuts.end());
  std::uint64_t begin = 0;
  for (auto cut : cuts) {
    cut = std::min(cut, n);
    for (std::uint64_t b = begin; b < cut; b += chunk) out.emplace_back(b, std::min(cut, b + chunk));
    begin = std::max(begin, cut);
  }
  return out;
}

std::vector<double> domain_accuracies(const std::vector<EvalResult>& parts, const std::vector<std::uint64_t>& starts) {
  std::vector<std::uint64_t> hits(starts.size(), 0), seen(starts.size(), 0);
  for (const auto& p : parts) {
    const auto it = std::upper_bound(starts.begin(), starts.end(), p.begin);
    if (it == starts.begin()) continue;
    const auto d = static_cast<std::size_t>(it - starts.begin() - 1);
    for (std::size_t c = 0; c < p.count.size(); ++c) {
      hits[d] += p.correct[c];
      seen[d] += p.count[c];
    }
  }
  std::vector<double> out;
  for (std::size_t d = 0; d < starts.size(); ++d)
    out.push_back(seen[d] ? static_cast<double>(hits[d]) / static_cast<double>(seen[d]) : 0.0);
  return out;
}

}  // namespace drift
