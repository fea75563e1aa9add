#include "engine/metrics/summary.hpp"

#include <algorithm>

namespace drift {

RunSummary summarize(const std::vector<EvaluatedRound>& evaluations, std::uint32_t rounds,
                     const std::vector<double>& targets) {
  RunSummary s;
  s.rounds = rounds;
  s.evaluations = static_cast<std::uint32_t>(evaluations.size());
  for (double t : targets) s.rounds_to.emplace_back(t, std::nullopt);
  if (evaluations.empty()) return s;

  s.best_accuracy = -1.0;
  for (const auto& e : evaluations) {
    if (e.accuracy > s.best_accuracy) {
      s.best_accuracy = e.accuracy;
      s.best_round = e.round;
    }
    for (auto& [target, first] : s.rounds_to)
      if (!first && e.accuracy >= target) first = e.round;
  }
  s.final_accuracy = evaluations.back().accuracy;
  s.final_loss = evaluations.back().loss;
  const std::size_t k = std::min<std::size_t>(5, evaluations.size());
  double sum = 0.0;
  for (std::size_t i = evaluations.size() - k; i < evaluations.size(); ++i) sum += evaluations[i].accuracy;
  s.last5_mean_accuracy = sum / static_cast<double>(k);
  return s;
}

}  // namespace drift
