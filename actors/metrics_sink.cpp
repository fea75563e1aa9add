#include "actors/metrics_sink.hpp"

#include <chrono>

#include "actors/wire.hpp"
#include "messages/codec.hpp"

namespace drift::actors {
namespace {

struct SinkState {
  std::vector<EvaluatedRound> evaluations;
  std::uint32_t rounds = 0;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

}  // namespace

caf::behavior metrics_sink(caf::event_based_actor* self, std::shared_ptr<RunDirectory> directory,
                           std::shared_ptr<RunObserver> observer, std::vector<double> targets) {
  auto state = std::make_shared<SinkState>();
  return {
      [=](report_atom, const Buffer& buffer) {
        const auto report = msg::decode_report(buffer);
        directory->append(report);
        state->rounds = report.round;
        if (report.evaluated) state->evaluations.push_back({report.round, report.test_accuracy, report.test_loss});
        observer->on_round(report);
      },
      // `reason` is empty when the run completed, else why the driver ended it early.
      [=](finish_atom, const std::string& reason) -> double {
        const auto summary = summarize(state->evaluations, state->rounds, targets);
        const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - state->started;
        if (!reason.empty()) observer->on_warning("the run ended early: " + reason);
        directory->write_summary(summary, reason.empty() ? "completed" : "ended", wall.count(), reason);
        directory->write_participation();
        observer->on_finish(summary);
        return summary.best_accuracy;
      },
      [=](stop_atom, const std::string& reason) {
        const auto summary = summarize(state->evaluations, state->rounds, targets);
        const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - state->started;
        directory->write_summary(summary, "stopped", wall.count(), reason);
        directory->write_participation();
      },
  };
}

}  // namespace drift::actors
