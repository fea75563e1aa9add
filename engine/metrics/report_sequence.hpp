#pragma once
// The order in which a run's reports leave the server, and when a checkpoint and the run's end
// may happen (docs/architecture.md#a-run-end-to-end). Aggregation k's report waits for its test
// evaluation, whose chunks finish in any order on any slot or worker; reports still leave in
// aggregation order. A checkpoint is taken only once every report before it is written, so the
// metrics.jsonl it records and the state it saves agree; the run's end waits for every report.
// Plain bookkeeping: the server actor sends, and tells this what came back.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "engine/metrics/evaluation.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/metrics/summary.hpp"

namespace drift {

// What a multi-chunk evaluation of the test set needs to become a report's results.
struct TestSetShape {
  std::int64_t num_classes = 0;
  std::vector<std::uint64_t> domain_starts;  // multi-domain test sets: where each domain begins
  // Held-out client splits: where client i's samples begin, and the end after the last one;
  // empty where the test set is not made of them.
  std::vector<std::uint64_t> client_starts{};
  std::vector<char> held_out{};  // by client: never takes part (federation.held_out); empty: none
};

class ReportSequence {
 public:
  explicit ReportSequence(TestSetShape shape) : shape_(std::move(shape)) {}
  const TestSetShape& test_set() const { return shape_; }

  // Queues an aggregation's report; with `eval_chunks` > 0 it waits for that many evaluation
  // results (add_evaluation). A report that carries client_participations asks for a per-client
  // evaluation: its results must carry per-sample hits. Returns the id those results name.
  std::uint64_t add(RoundReport report, std::size_t eval_chunks);
  // The report waiting under `id` (its model version names the evaluation jobs).
  const RoundReport& queued(std::uint64_t id) const { return pending_.at(id).report; }
  // Chunk `chunk` of report `id`'s evaluation. The last one fills the report's test results.
  void add_evaluation(std::uint64_t id, std::size_t chunk, EvalResult result);

  // The reports that may leave now, in aggregation order; each counts as sent.
  std::vector<RoundReport> take_sendable();
  // The sink wrote one sent report.
  void report_written() { ++written_; }

  // The driver holds after aggregation `round` until its checkpoint is saved.
  void hold_for_checkpoint(std::uint32_t round) { checkpoint_round_ = round; }
  // The round whose checkpoint may start now: held, no report queued, every sent report
  // written, and not started already. Each hold is handed out once.
  std::optional<std::uint32_t> start_checkpoint();
  // The started checkpoint is saved (or failed): the hold ends.
  void checkpoint_done() { checkpoint_round_.reset(), checkpoint_started_ = false; }

  // The driver ended the run. finish() hands out its end once, when no report is queued.
  void driver_finished(RunEnd end) { end_ = std::move(end); }
  std::optional<RunEnd> finish();

 private:
  // client_accuracy and its summary from per-sample hits (evaluation.per_client).
  void add_client_accuracy(RoundReport& r, const std::vector<EvalResult>& parts) const;

  struct Pending {
    RoundReport report;
    std::vector<EvalResult> parts;
    std::size_t outstanding = 0;
    std::chrono::steady_clock::time_point eval_start;
  };

  TestSetShape shape_;
  std::map<std::uint64_t, Pending> pending_;
  std::uint64_t next_id_ = 0;
  std::uint64_t sent_ = 0, written_ = 0;
  std::optional<std::uint32_t> checkpoint_round_;
  bool checkpoint_started_ = false;
  std::optional<RunEnd> end_;
  bool finished_ = false;
};

}  // namespace drift
