// The server's report bookkeeping without actors: reports leave in aggregation order whatever
// order their evaluation chunks finish in; a checkpoint waits for every report before it to be
// written; the run's end waits for every report.
#include "catch_torch.hpp"

#include "engine/metrics/report_sequence.hpp"

using namespace drift;

namespace {

RoundReport report_of(std::uint32_t round) {
  RoundReport r;
  r.round = round;
  r.model_version = round;
  return r;
}

// Two classes; `correct` of `count` samples of class 0, with a loss of 1 each.
EvalResult chunk(std::uint64_t begin, std::uint64_t correct, std::uint64_t count) {
  return EvalResult{begin, begin + count, static_cast<double>(count), {correct, 0}, {count, 0}};
}

std::vector<std::uint32_t> rounds_of(const std::vector<RoundReport>& reports) {
  std::vector<std::uint32_t> out;
  for (const auto& r : reports) out.push_back(r.round);
  return out;
}

}  // namespace

TEST_CASE("reports leave in aggregation order whatever order evaluations finish in", "[report_sequence]") {
  ReportSequence seq(TestSetShape{2, {}});
  const auto first = seq.add(report_of(1), 2);  // evaluated in two chunks
  seq.add(report_of(2), 0);                     // not evaluated: ready at once, but behind the first
  CHECK(seq.take_sendable().empty());
  CHECK(seq.queued(first).model_version == 1);

  seq.add_evaluation(first, 1, chunk(10, 5, 10));  // the second chunk finishes first
  CHECK(seq.take_sendable().empty());
  seq.add_evaluation(first, 0, chunk(0, 10, 10));
  const auto sent = seq.take_sendable();
  REQUIRE(rounds_of(sent) == std::vector<std::uint32_t>{1, 2});
  // 15 of 20 right, a loss of 1 per sample; class 1 never seen reads 0.
  CHECK(sent[0].evaluated);
  CHECK(sent[0].test_accuracy == 0.75);
  CHECK(sent[0].test_loss == 1.0);
  CHECK(sent[0].per_class_accuracy == std::vector<double>{0.75, 0.0});
  CHECK_FALSE(sent[1].evaluated);
  CHECK(seq.take_sendable().empty());

  CHECK_THROWS_AS(seq.add_evaluation(first, 0, chunk(0, 1, 1)), std::logic_error);  // already sent
}

TEST_CASE("a checkpoint starts once every report before it is written, once per hold", "[report_sequence]") {
  ReportSequence seq(TestSetShape{2, {}});
  CHECK_FALSE(seq.start_checkpoint());  // nothing held
  seq.add(report_of(1), 0);
  seq.hold_for_checkpoint(1);
  CHECK_FALSE(seq.start_checkpoint());  // the report is still queued
  REQUIRE(seq.take_sendable().size() == 1);
  CHECK_FALSE(seq.start_checkpoint());  // sent, not yet written
  seq.report_written();
  CHECK(seq.start_checkpoint() == std::optional<std::uint32_t>(1));
  CHECK_FALSE(seq.start_checkpoint());  // already started
  seq.checkpoint_done();
  CHECK_FALSE(seq.start_checkpoint());  // the hold is over

  const auto second = seq.add(report_of(2), 1);
  seq.hold_for_checkpoint(2);
  CHECK_FALSE(seq.start_checkpoint());  // its evaluation is still running
  seq.add_evaluation(second, 0, chunk(0, 1, 1));
  REQUIRE(seq.take_sendable().size() == 1);
  seq.report_written();
  CHECK(seq.start_checkpoint() == std::optional<std::uint32_t>(2));
}

TEST_CASE("the run's end is handed out once, after the last report", "[report_sequence]") {
  ReportSequence seq(TestSetShape{2, {}});
  const auto id = seq.add(report_of(1), 1);
  CHECK_FALSE(seq.finish());  // the driver has not ended the run
  seq.driver_finished(RunEnd{RunStatus::ended, "nobody can come online again"});
  CHECK_FALSE(seq.finish());  // a report is still waiting for its evaluation
  seq.add_evaluation(id, 0, chunk(0, 1, 1));
  REQUIRE(seq.take_sendable().size() == 1);
  const auto end = seq.finish();
  REQUIRE(end);
  CHECK(end->status == RunStatus::ended);
  CHECK(end->reason == "nobody can come online again");
  CHECK_FALSE(seq.finish());
}

TEST_CASE("a multi-domain test set reports each domain's accuracy", "[report_sequence]") {
  ReportSequence seq(TestSetShape{2, {0, 10}});  // domains [0, 10) and [10, 20)
  const auto id = seq.add(report_of(1), 2);
  seq.add_evaluation(id, 0, chunk(0, 10, 10));
  seq.add_evaluation(id, 1, chunk(10, 2, 10));
  const auto sent = seq.take_sendable();
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].domain_accuracy == std::vector<double>{1.0, 0.2});
}
