#pragma once
// SIGINT and SIGTERM during a run (docs/checkpoints.md#interrupts). While an InterruptWatch
// lives, both signals are taken by one thread instead of killing the process: the first sets
// RunInterrupt::signal, so the run stops at its next aggregation with a checkpoint and a
// summary saying how to resume; a second ends the process at once (exit 128 + signal). Every
// file of the run directory is written line by line and flushed, so even then each is
// line-complete, and `drift resume` cuts what follows the checkpoint.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "actors/checkpointer.hpp"

namespace drift::cli {

class InterruptWatch {
 public:
  // `say` tells the person what happens (called from the watching thread). With
  // `quit_on_second` false, a second signal is only counted (a study forwards it to its runs).
  InterruptWatch(std::shared_ptr<actors::RunInterrupt> interrupt, std::function<void(const std::string&)> say,
                 bool quit_on_second = true);
  ~InterruptWatch();  // stops watching; the signals act as before again
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  // The exit code of a run stopped by the first signal: 128 + its number.
  int exit_code() const;

 private:
  std::shared_ptr<actors::RunInterrupt> interrupt_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace drift::cli
