#include "actors/metrics_sink.hpp"

#include "actors/wire.hpp"
#include "engine/core/error.hpp"
#include "messages/codec.hpp"

namespace drift::actors {

caf::behavior metrics_sink(caf::event_based_actor* self, std::shared_ptr<RunDirectory> directory,
                           std::shared_ptr<RunObserver> observer, SinkOptions options) {
  auto recorder = std::make_shared<RunRecorder>(std::move(directory), std::move(options));
  return {
      // A report that cannot be written (a full disk) is an error to the server, which stops
      // the run: nothing that follows could be recorded.
      [=](report_atom, const Buffer& buffer) -> caf::result<void> {
        auto report = msg::decode_report(buffer);
        try {
          recorder->record(report);
        } catch (const WriteError& e) {
          return caf::make_error(caf::sec::runtime_error, std::string(e.what()));
        }
        observer->on_round(report);
        return caf::unit;
      },
      // How the driver ended the run, and why when it did not complete.
      [=](finish_atom, RunStatus status, const std::string& reason) -> caf::result<double> {
        if (!reason.empty()) observer->on_warning("the run " + std::string(name_of(status)) + ": " + reason);
        try {
          const auto summary = recorder->finish({status, reason});
          observer->on_finish(summary);
          return summary.best_accuracy;
        } catch (const WriteError& e) {
          return caf::make_error(caf::sec::runtime_error, std::string(e.what()));
        }
      },
      [=](stop_atom, const std::string& reason) {
        try {
          recorder->finish({RunStatus::stopped, reason});
        } catch (const WriteError&) {
          // The run is failing already, with its own reason; the disk may be why.
        }
      },
  };
}

}  // namespace drift::actors
