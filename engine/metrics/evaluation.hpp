#pragma once
// Test-set evaluation as plain counts: what a chunk of test samples yields, and how chunks
// combine into accuracies overall, per class and per domain. Counts, not means, so that any
// split of the test set into chunks combines to the same bits.
#include <cstdint>
#include <utility>
#include <vector>

namespace drift {

struct EvalResult {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  double loss_sum = 0.0;
  std::vector<std::uint64_t> correct;  // per class
  std::vector<std::uint64_t> count;    // per class
  std::vector<std::uint8_t> hits{};    // per sample of [begin, end), 1 when right; empty unless asked
};

struct Evaluation {
  double accuracy = 0.0;
  double loss = 0.0;
  std::vector<double> per_class_accuracy;
};

// Combines range results given in ascending range order.
Evaluation combine_evaluations(const std::vector<EvalResult>& parts, std::int64_t num_classes);

// The ranges of `n` test samples in chunks of `chunk`, independent of the number of slots.
// A chunk never crosses one of `boundaries` (domain starts), so each belongs to one domain.
std::vector<std::pair<std::uint64_t, std::uint64_t>> evaluation_chunks(
    std::uint64_t n, std::uint64_t chunk, const std::vector<std::uint64_t>& boundaries = {});

// Accuracy per domain from range results that each lie inside one domain.
std::vector<double> domain_accuracies(const std::vector<EvalResult>& parts, const std::vector<std::uint64_t>& starts);

}  // namespace drift
