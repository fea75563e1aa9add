#include "engine/metrics/report_sequence.hpp"

#include "engine/metrics/client_accuracy.hpp"

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
  if (!r.client_participations.empty()) add_client_accuracy(r, e.parts);
  r.wall_eval_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - e.eval_start).count();
}

void ReportSequence::add_client_accuracy(RoundReport& r, const std::vector<EvalResult>& parts) const {
  const auto& starts = shape_.client_starts;
  if (starts.size() != r.client_participations.size() + 1)
    throw std::logic_error("a per-client evaluation needs every client's held-out split");
  const auto hits = hits_per_client(parts, starts);
  r.client_accuracy = client_accuracies(hits, starts);
  std::vector<double> rates;
  for (auto n : r.client_participations)
    rates.push_back(r.round ? static_cast<double>(n) / static_cast<double>(r.round) : 0.0);
  const auto s = summarize_client_accuracy(hits, starts, rates, shape_.held_out);
  r.client_summary = true;
  r.client_accuracy_mean = s.mean;
  r.client_accuracy_weighted = s.weighted;
  r.client_accuracy_p10 = s.p10;
  r.client_accuracy_worst = s.worst;
  r.client_participation_correlation = s.participation_correlation;
  r.client_accuracy_held_out = s.held_out;
  r.held_out_clients.clear();
  for (std::uint32_t c = 0; c < shape_.held_out.size(); ++c)
    if (shape_.held_out[c]) r.held_out_clients.push_back(c);
  r.clients_evaluated = 0;
  for (std::size_t c = 0; c + 1 < starts.size(); ++c) r.clients_evaluated += starts[c + 1] > starts[c] ? 1 : 0;
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
