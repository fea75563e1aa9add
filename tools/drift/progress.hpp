#pragma once
// Shows a run to a person: a live line on a terminal, plain log lines otherwise.
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "actors/metrics_sink.hpp"

namespace drift::cli {

class ProgressDisplay final : public actors::RunObserver {
 public:
  // `log` receives every round (it writes log.txt, and the console when not a terminal).
  ProgressDisplay(std::shared_ptr<spdlog::logger> log, std::shared_ptr<spdlog::logger> file_only, bool live);
  void on_round(const RoundReport& report) override;
  void on_finish(const RunSummary& summary) override;
  void on_notice(const std::string& text) override;
  void on_warning(const std::string& text) override;
  void on_progress(std::uint32_t round, std::uint32_t arrived, std::uint32_t needed) override;
  void on_checkpoint(const std::string& text) override;  // to log.txt only: it comes every few minutes

 private:
  std::shared_ptr<spdlog::logger> log_, file_only_;
  bool live_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  // Written by the metrics sink's thread (on_round), read by the server's (on_progress).
  std::atomic<double> last_accuracy_{0.0};
  double last_loss_ = 0.0;
  std::atomic<std::chrono::steady_clock::rep> last_progress_{
      std::chrono::steady_clock::now().time_since_epoch().count()};
};

}  // namespace drift::cli
