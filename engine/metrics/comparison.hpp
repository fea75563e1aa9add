#pragma once
// The table `drift compare` writes: per algorithm variant, mean +- sample standard deviation
// over seeds of the best and last-5 accuracies, rounds to each target (over the seeds that
// reached it), and communication per round. Diverged seeds are counted and named, never averaged.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace drift {

struct SeedResult {
  std::uint64_t seed = 0;
  double best_accuracy = 0.0;
  double last5_accuracy = 0.0;
  std::vector<std::optional<double>> rounds_to;  // per target, empty when not reached
  double bytes_per_round = 0.0;                  // up + down, mean over aggregations
  std::vector<double> domain_last5;              // multi-domain: mean of the last 5 evaluations, by domain
  bool diverged = false;                         // its numbers are not results: counted, never averaged
};

struct ComparisonRow {
  std::string label;  // the variant as given on the command line, e.g. fedskc:reference+gpr=false
  std::vector<SeedResult> seeds;
};

struct MeanStd {
  double mean = 0.0;
  double std = 0.0;  // sample standard deviation (n - 1); 0 for one value
};
MeanStd mean_std(const std::vector<double>& values);

// Markdown and CSV renderings of the same rows; accuracies in percent, bytes in MB (1e6).
// With `domains` (a multi-domain dataset) the markdown adds a table of last-5 accuracy per
// domain and their mean (FedCCL's figure), and the CSV a column pair per domain.
std::string comparison_markdown(const std::vector<ComparisonRow>& rows, const std::vector<double>& targets,
                                const std::vector<std::string>& domains = {});
std::string comparison_csv(const std::vector<ComparisonRow>& rows, const std::vector<double>& targets,
                           const std::vector<std::string>& domains = {});

}  // namespace drift
