#pragma once
// Round drivers: discrete-event simulations in virtual time whose events carry real
// training. A driver decides who trains, from which model, and what happens when; the host
// (the server actor, or a test) runs the training through a JobRunner and reports each job's
// outcome back, and asks the sampler for clients and reports its answer back. Events are applied strictly in (virtual
// time, client id, sequence) order, so results never depend on which job finishes first in wall time.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/algorithms/algorithm.hpp"
#include "engine/config/scenario.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/metrics/summary.hpp"
#include "engine/population/population.hpp"
#include "engine/sampling/cohort_sampler.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

class EdgeHost;

class JobRunner {
 public:
  virtual ~JobRunner() = default;
  // Size in bytes of `task` as a client downloads it (the host encodes each task once).
  virtual std::uint64_t task_bytes(const std::shared_ptr<const TrainingTask>& task) = 0;
  // Starts training `client` on `task`. The host later calls Driver::on_outcome(job, ...),
  // from the same thread that calls the driver's other methods.
  virtual void launch(std::uint64_t job, std::uint32_t client, const std::shared_ptr<const TrainingTask>& task) = 0;
  // Starts a sync round's jobs, given in cohort order. A host that packs clients
  // (devices.pack) trains consecutive jobs together; the default launches each on its own.
  virtual void launch_round(const std::vector<std::pair<std::uint64_t, std::uint32_t>>& jobs,
                            const std::shared_ptr<const TrainingTask>& task) {
    for (const auto& [job, client] : jobs) launch(job, client, task);
  }
  // The same training as a counterfactual: the client's persistent state is read, never
  // written (simulation.shadow_clients). A host that keeps no client state may train it as any
  // job, which is the default.
  virtual void launch_counterfactual(std::uint64_t job, std::uint32_t client,
                                     const std::shared_ptr<const TrainingTask>& task) {
    launch(job, client, task);
  }
  // Asks the sampler for clients. The host calls Driver::on_selection with the answer, later
  // (the sampler actor) or before this returns (a CohortSampler in the same thread).
  virtual void request_selection(const SelectionRequest& request) = 0;
};

struct JobOutcome {
  bool ok = false;
  std::string error;               // why the job failed, if !ok
  bool lost = false;               // the worker running it was lost: a dropout, not a failure
  std::uint64_t upload_bytes = 0;  // size of the update message
  ClientUpdate update;
  // Every field, in a checkpoint's order (sim_archive.cpp).
  template <class Visit>
  void each_field(Visit&& visit) {
    visit(ok, error, lost, upload_bytes, update);
  }
};

class DriverListener {
 public:
  virtual ~DriverListener() = default;
  // After each round (sync) or aggregation (async), in order. `evaluate` holds the new
  // global weights when this aggregation is to be evaluated, else null.
  virtual void on_aggregation(RoundReport report, const NamedTensors* evaluate) = 0;
  // The run is over: it completed, the driver ended it because no progress is possible (nobody
  // can come online again, say), or it diverged; `end.reason` says why when it did not complete.
  virtual void on_finished(const RunEnd& end) = 0;
  // Within an aggregation: `arrived` of the `needed` updates are in (FedBuff's buffer, a sync
  // round's outcomes), so a person can see a long wait move. Default: ignored.
  virtual void on_progress(std::uint32_t round, std::uint32_t arrived, std::uint32_t needed) {}
  // Checkpoints (docs/checkpoints.md). Asked after each aggregation (async: each whose report
  // went out evaluated; `last` when the run ends with it): true makes the driver hold there (no
  // new event is applied, no job launched) until every job it launched has answered; then it
  // calls on_checkpoint_ready, and the host saves the driver (Driver::archive) and continues it
  // (Driver::resume). Default: never.
  virtual bool wants_checkpoint(std::uint32_t round, bool last) { return false; }
  virtual void on_checkpoint_ready(std::uint32_t round) {}
  // A person asked the run to stop (SIGINT): it stops at its next aggregation, with a
  // checkpoint. A driver whose next aggregation may never come (a buffered cloud whose edge
  // models all arrive late) asks as it goes, and stops without one. Default: never.
  virtual bool stop_asked() const { return false; }
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual void start() = 0;
  virtual void on_outcome(std::uint64_t job, JobOutcome outcome) = 0;
  virtual void on_selection(Selection selection) = 0;
  virtual bool finished() const = 0;
  // Saves the driver's whole state while it holds for a checkpoint, or restores it into a
  // driver that has not started: the simulated world, the global model and the server
  // half, jobs in flight with their outcomes. Throws DecodeError for a checkpoint that does
  // not fit.
  virtual void archive(StateArchive& ar) = 0;
  // Continues from the hold point: after a checkpoint was saved, or instead of start() after
  // a restore. A scenario whose rounds or time limit were raised since goes on past them.
  virtual void resume() = 0;
};

struct DriverSetup {
  DriverSetup();
  DriverSetup(DriverSetup&&) noexcept;
  DriverSetup& operator=(DriverSetup&&) noexcept;
  ~DriverSetup();

  const Scenario* scenario = nullptr;
  std::shared_ptr<const Population> population;
  NamedTensors initial_weights;
  std::unique_ptr<ServerAlgorithm> algorithm;  // what every aggregation makes of its updates
  // [hierarchy]: edge e's own server half (needed only there; engine/sim/round_tier.hpp).
  std::function<std::unique_ptr<ServerAlgorithm>(std::uint32_t edge)> make_edge_algorithm;
  // ... and where the edges' server halves and models live; null: in this process, built by
  // make_edge_algorithm (engine/sim/edge_host.hpp).
  std::unique_ptr<EdgeHost> edge_host;
  bool log_eligible = true;     // record "eligible" events (O(population) per round)
  bool private_models = false;  // accuracy from the clients' own evaluations
};

// Picks the driver of scenario.simulation.mode (sync | fedasync | fedbuff).
std::unique_ptr<Driver> make_driver(DriverSetup setup, JobRunner& runner, DriverListener& listener);

}  // namespace drift
