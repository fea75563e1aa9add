#pragma once
// Runs one federation in this process: spawns the actors, waits for the last round.
#include <memory>

#include <optional>

#include "actors/checkpointer.hpp"
#include "actors/device_pool.hpp"
#include "actors/metrics_sink.hpp"
#include "actors/network.hpp"
#include "engine/cluster/endpoint.hpp"
#include "engine/compose/federation_data.hpp"
#include "engine/compose/run_directory.hpp"
#include "engine/config/scenario.hpp"
#include "engine/training/devices.hpp"

namespace drift::actors {

// What a coordinator that starts its own workers does once it listens (drift run
// --slot-processes): start them, and say when one of them has died before the run could begin.
struct ListenHooks {
  virtual ~ListenHooks() = default;
  virtual void on_listening(const Endpoint& at, const std::string& scenario_hash) = 0;
  virtual std::string failure() = 0;  // "" while every worker it started may still join
};

// A coordinator's side of a multi-node run: where it listens, whom it admits, whom it waits for.
struct ClusterOptions {
  std::optional<Endpoint> listen;  // unset: a single-process run
  std::uint32_t workers = 0;       // start once this many workers are ready
  bool no_local = false;           // train on workers only
  bool edges_on_workers = false;   // [hierarchy]: the workers keep the edges' aggregators
  std::string token;               // the join token (read_join_token)
  TlsOptions tls;
  double join_timeout_s = 600;         // give up when the workers are not all ready by then; 0: wait forever
  WorkerWatch watch;                   // when an unresponsive worker is let go
  std::shared_ptr<ListenHooks> hooks;  // null: the workers are started by someone else
};

// Checkpoints and interrupts (docs/checkpoints.md).
struct RunControl {
  std::shared_ptr<const StoredCheckpoint> resume_from;  // continue from it (the directory is reopened)
  std::shared_ptr<RunInterrupt> interrupt;              // set by a signal; may be null
  std::uint32_t stop_after = 0;                         // > 0: stop as if interrupted after this aggregation (tests)
  std::string resume_command;                           // what summary.json tells a person to run when interrupted
};

struct FederationOptions {
  std::uint32_t cpu_slots = 1;       // CPU trainer slots when `devices` is empty; results do not depend on it
  std::vector<DeviceSlots> devices;  // the device pool; empty: cpu x cpu_slots
  ClusterOptions cluster;
  RunControl control;
};

struct RunResult {
  double best_accuracy = 0.0;
  bool interrupted = false;  // stopped at a checkpoint by an interrupt; summary.json says how to resume
};

// Throws std::runtime_error if the run cannot finish (then summary.json says "stopped" and
// why, beside everything reported so far).
RunResult run_federation(std::shared_ptr<const Scenario> scenario, std::shared_ptr<const FederationData> data,
                         std::shared_ptr<RunDirectory> directory, std::shared_ptr<RunObserver> observer,
                         const FederationOptions& options);

}  // namespace drift::actors
