#pragma once
// When the server saves a checkpoint and how (docs/checkpoints.md): every `checkpoint.every`
// aggregations, every `checkpoint.minutes` of wall time, after the run's last aggregation (so
// a finished run can be extended), and when an interrupt asks the run to stop.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/compose/checkpoint.hpp"
#include "engine/compose/run_directory.hpp"
#include "engine/config/scenario.hpp"
#include "messages/state_store.hpp"

namespace drift::actors {

// Shared with the thread that receives SIGINT and SIGTERM: the first asks the run to stop at
// its next aggregation, with a checkpoint. `stopped` tells the runner that it did.
struct RunInterrupt {
  std::atomic<int> signal{0};    // the first signal's number; 0: none yet
  std::atomic<int> received{0};  // how many came
  std::atomic<bool> stopped{false};
  std::atomic<bool> checkpoint_on_disk{false};  // one to resume from exists (this run's, or the one it resumed)
};

struct CheckpointOptions {
  std::shared_ptr<RunDirectory> directory;              // null: no checkpoints
  std::shared_ptr<const StoredCheckpoint> resume_from;  // null: a new run
  std::shared_ptr<RunInterrupt> interrupt;              // null: none can come
  std::uint32_t stop_after = 0;                         // > 0: stop as if interrupted after this aggregation (tests)
};

class Checkpointer {
 public:
  Checkpointer(const Scenario& scenario, CheckpointOptions options, std::shared_ptr<msg::StateStore> states);

  bool enabled() const { return options_.directory != nullptr; }
  // Whether aggregation `round` is to be checkpointed; `last` when the run ends with it.
  bool due(std::uint32_t round, bool last);
  // The checkpoint being taken is to stop the run.
  bool stopping() const { return stopping_; }
  // Writes the checkpoint; returns what it cost, for the log. Throws WriteError.
  std::string write(std::uint32_t round, double virtual_time, std::string driver, std::string sampler);
  // The run's wall time so far, over every process that ran it.
  double wall_seconds() const;
  const CheckpointOptions& options() const { return options_; }

 private:
  using Clock = std::chrono::steady_clock;
  const Scenario& scenario_;
  CheckpointOptions options_;
  std::shared_ptr<msg::StateStore> states_;
  Clock::time_point started_ = Clock::now();
  Clock::time_point last_ = Clock::now();
  double wall_before_ = 0.0;
  bool stopping_ = false;
};

}  // namespace drift::actors
