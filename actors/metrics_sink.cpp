#include "actors/metrics_sink.hpp"

#include <chrono>

#include "actors/wire.hpp"
#include "engine/core/error.hpp"
#include "engine/sim/divergence.hpp"
#include "messages/codec.hpp"

namespace drift::actors {
namespace {

struct SinkState {
  std::vector<RoundFacts> rounds;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

}  // namespace

caf::behavior metrics_sink(caf::event_based_actor* self, std::shared_ptr<RunDirectory> directory,
                           std::shared_ptr<RunObserver> observer, SinkOptions options) {
  auto state = std::make_shared<SinkState>();
  state->rounds = std::move(options.earlier);
  const auto targets = options.targets;
  const auto wall_before = options.wall_before;
  const auto resume = options.resume_command;
  auto write_summary = [=](const std::string& status, const std::string& reason) {
    const auto summary = summarize(state->rounds, targets);
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - state->started;
    const bool interrupted = status == name_of(RunStatus::interrupted);
    directory->write_summary(summary, status, wall_before + wall.count(), reason, interrupted ? resume : "");
    directory->write_participation();
    return summary;
  };
  return {
      // A report that cannot be written (a full disk) is an error to the server, which stops
      // the run: nothing that follows could be recorded.
      [=](report_atom, const Buffer& buffer) -> caf::result<void> {
        auto report = msg::decode_report(buffer);
        if (report.divergence.empty()) report.divergence = evaluation_divergence(report);
        try {
          directory->append(report);
        } catch (const WriteError& e) {
          return caf::make_error(caf::sec::runtime_error, std::string(e.what()));
        }
        state->rounds.push_back(facts_of(report));
        observer->on_round(report);
        return caf::unit;
      },
      // How the driver ended the run (a RunStatus name), and why when it did not complete.
      [=](finish_atom, const std::string& status, const std::string& reason) -> caf::result<double> {
        if (!reason.empty()) observer->on_warning("the run " + status + ": " + reason);
        try {
          const auto summary = write_summary(status, reason);
          observer->on_finish(summary);
          return summary.best_accuracy;
        } catch (const WriteError& e) {
          return caf::make_error(caf::sec::runtime_error, std::string(e.what()));
        }
      },
      [=](stop_atom, const std::string& reason) {
        try {
          write_summary(name_of(RunStatus::stopped), reason);
        } catch (const WriteError&) {
          // The run is failing already, with its own reason; the disk may be why.
        }
      },
  };
}

}  // namespace drift::actors
