#pragma once
// The headline numbers of a run, in the three reporting conventions of the papers we
// reproduce: best round (FedSKC, FedSC, FedKTL), mean of the last five (FedCCL), rounds-to-X.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace drift {

struct RunSummary {
  std::uint32_t rounds = 0;
  std::uint32_t evaluations = 0;
  double best_accuracy = 0.0;
  std::uint32_t best_round = 0;
  double final_accuracy = 0.0;
  double final_loss = 0.0;
  double last5_mean_accuracy = 0.0;  // mean over the last min(5, evaluations) evaluations
  std::vector<std::pair<double, std::optional<std::uint32_t>>> rounds_to;  // target -> first round
};

struct EvaluatedRound {
  std::uint32_t round = 0;
  double accuracy = 0.0;
  double loss = 0.0;
};

RunSummary summarize(const std::vector<EvaluatedRound>& evaluations, std::uint32_t rounds,
                     const std::vector<double>& targets);

}  // namespace drift
