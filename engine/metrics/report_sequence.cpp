#include "engine/metrics/report_sequence.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace drift {

std::uint64_t ReportSequence::add(RoundReport report, std::size_t eval_chunks) {
  const auto id = next_id_++;
  auto& entry = pending_[id];
  entry.report = std::move(report);
  entry.parts.assign(eval_chunks, EvalResult{});
  entry.outstanding = eval_chunks;
  entry.eval_start = std::chrono::steady_clock::now();
  return id;
}

void ReportSequence::add_evaluation(std::uint64_t id, std::size_t chunk, EvalResult result) {
  auto it = pending_.find(id);
  if (it == pending_.end() || chunk >= it->second.parts.size() || it->second.outstanding == 0)
    throw std::logic_error("evaluation chunk " + std::to_string(chunk) + " of report " + std::to_string(id) +
                           " was not asked for");
  auto& e = it->second;
  e.parts[chunk] = std::move(result);
  if (--e.outstanding > 0) return;
  const auto summary = combine_evaluations(e.parts, shape_.num_classes);
  auto& r = e.report;
  r.evaluated = true;
  r.test_accuracy = summary.accuracy;
  r.test_loss = summary.loss;
  r.per_class_accuracy = summary.per_class_accuracy;
  r.domain_accuracy = domain_accuracies(e.parts, shape_.domain_starts);
  r.wall_eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - e.eval_start).count();
}

std::vector<RoundReport> ReportSequence::take_sendable() {
  std::vector<RoundReport> out;
  while (!pending_.empty() && pending_.begin()->second.outstanding == 0) {
    out.push_back(std::move(pending_.begin()->second.report));
    pending_.erase(pending_.begin());
    ++sent_;
  }
  return out;
}

std::optional<std::uint32_t> ReportSequence::start_checkpoint() {
  if (!checkpoint_round_ || checkpoint_started_ || !pending_.empty() || written_ != sent_) return std::nullopt;
  checkpoint_started_ = true;
  return checkpoint_round_;
}

std::optional<RunEnd> ReportSequence::finish() {
  if (!end_ || finished_ || !pending_.empty()) return std::nullopt;
  finished_ = true;
  return end_;
}

}  // namespace drift
