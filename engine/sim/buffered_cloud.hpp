#pragma once
// The buffered cloud: the edge tier under hierarchy.cloud = "fedbuff"
// (docs/hierarchy.md#asynchronous-edges-the-buffered-cloud). Each edge loops on its own clock: it
// pulls the global model, runs hierarchy.edge_rounds rounds of its clients, and sends its model;
// the cloud steps every hierarchy.buffer models. The driver runs the
// running edges' next rounds side by side (a wave) and, between waves, this file applies the
// cloud's events in time order as far as it is safe: no running edge can send a model before
// its clock plus its uplink, so an event before every running edge's bound cannot be overtaken.
// What is applied when is then a function of virtual time only, and so are the bits.
// This header is the class for its two files: buffered_cloud.cpp (the edges' loops and the
// cloud's events) and buffered_cloud_step.cpp (what comes next, the step, its report, checkpoints).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/sim/edge_tier.hpp"
#include "engine/sim/sync_replay.hpp"

namespace drift {

class BufferedCloud final : public EdgeTier {
 public:
  BufferedCloud(const Scenario& scenario, const Population& population, const EdgeMembership& membership,
                std::unique_ptr<EdgeHost> host, std::unique_ptr<ServerAlgorithm> cloud_half)
      : EdgeTier(scenario, population, membership, std::move(host), std::move(cloud_half)),
        concurrency_(static_cast<std::uint32_t>(scenario.hierarchy.concurrency)),
        loops_(edges_.size()) {}

  // The edges loop on their own (each waits to pull at 0 to begin with); the records of a step's
  // report past its end join the next report.
  std::string begin(std::uint32_t round, double t, const NamedTensors& global, RoundReport& report) override {
    begin_cloud_round(round, t, global);
    report.clients.insert(report.clients.begin(), std::make_move_iterator(carried_.begin()),
                          std::make_move_iterator(carried_.end()));
    carried_.clear();
    return "";
  }
  // What comes next once the cloud's events before it are applied: the running edges' next
  // rounds (a wave), the cloud's step (the buffer is full), or the end of the run. Once every
  // edge has ended two loops since a stop was asked for without a step, the run stops without it.
  TierNext next(const NamedTensors& global, Roster& roster, double time_limit, bool stop_asked) override;
  void close(NamedTensors& global, RoundReport& report, std::function<void(CloudStep)> done) override {
    after_models([this, &global, &report, done] {
      auto step = close_buffered(global, report);
      carried_ = take_records_after(report, step.end);
      done(std::move(step));
    });
  }

 private:
  void archive_cloud(StateArchive& ar) override;
  // `next` once every model the edges send has come from the host: the step waits for them.
  void after_models(std::function<void()> next) override {
    if (models_pending_ == 0) return next();
    when_models_here_ = std::move(next);
  }
  // Applies the cloud's events in time order (models arriving, then edges pulling `global`; at
  // one instant, pulls first), as far as no running edge could still send a model before them.
  // True when the buffer is full: close() takes the step. `roster` says when an idle edge's
  // clients are next free.
  bool advance(const NamedTensors& global, Roster& roster);
  // The time of the next event waiting (kNever: none; the run cannot go on unless an edge runs).
  double next_event() const;
  // "2 models in the buffer, 3 late, 1 loop lost, 0 idle" since the last cloud step.
  std::string since_last_step() const;
  std::size_t loops_without_step() const;  // late, lost or idle since the last step
  // Why the run ends (hierarchy.stall_loops), or "" while it goes on.
  std::string stalled() const;
  // Why the run stops when asked to and no step came in 2 loops per edge since; "" before.
  std::string stop_unanswered(bool stop_asked);
  void begin_loop(std::uint32_t e, double t, const NamedTensors& global);
  void ask_model(std::uint32_t e, std::uint64_t request);
  void settle(Roster& roster);
  void end_loop(std::uint32_t e, Roster& roster);
  double horizon() const;
  std::uint32_t holding(double t) const;
  void wake_queued(double t, const NamedTensors& global);
  CloudStep close_buffered(NamedTensors& global, RoundReport& report);

  // Where an edge is in its loop (pull, edge rounds, send), when it pulls next or last pulled
  // (kNever: after the next cloud step; every edge first pulls at 0), and what it pulled, with
  // the cloud steps taken by then; the edge's round itself is EdgeTier::Edge.
  struct Loop {
    enum class Phase : std::uint8_t { waiting, running, sending } phase = Phase::waiting;
    double pull_at = 0.0;
    BufferedEdge sent;  // sending: its model, arriving at sent.arrival
    NamedTensors pulled;
    std::uint64_t pulled_version = 0;
    std::uint32_t begun = 0;  // loops begun: its edge rounds' serials count on from them
    // hierarchy.concurrency: a pull waiting for a free slot (due at pull_at), and a loop that
    // ended, holding its slot until `slot_until` (slot_pending).
    bool queued = false;
    double slot_until = 0.0;
    bool slot_pending = false;
  };

  // The buffer and what happened since the last cloud step (round_ - 1 steps so far).
  std::uint32_t concurrency_ = 0;  // edges at work at once (hierarchy.concurrency); 0 = every edge
  std::vector<Loop> loops_;        // by edge
  std::vector<BufferedEdge> buffer_;
  std::uint64_t model_requests_ = 0;  // models asked of the host so far
  std::uint32_t models_pending_ = 0;  // ... not here yet
  std::function<void()> when_models_here_;
  double cloud_now_ = 0.0;  // the latest event applied
  std::vector<std::uint32_t> since_lost_, since_idle_, since_late_;
  std::optional<std::size_t> loops_when_stop_asked_;  // loops ended without a step when it was
  std::uint64_t since_bytes_up_ = 0, since_bytes_down_ = 0;
  std::vector<ClientRecord> carried_;  // the last step's report's records past its end
};
}  // namespace drift
