// The asynchronous drivers, FedAsync (Xie et al.) and FedBuff (Nguyen et al.):
// docs/algorithms.md#fedasync and #fedbuff. Up to `concurrency` clients train at once, each
// from the model version current when it was dispatched. Events are applied in (virtual time,
// client id) order by a conservative rule: an event is applied only when no running job can
// still finish before it (a job's earliest finish is known at dispatch; its exact finish when
// its upload size is known). So real training runs in parallel, yet the result never depends
// on wall-clock order. Free slots are filled by asking the sampler; while its answer is
// awaited, no event is applied.
#include <cmath>
#include <map>
#include <string>

#include "engine/core/flag_guard.hpp"
#include "engine/sim/async_aggregation.hpp"
#include "engine/sim/async_idle.hpp"
#include "engine/sim/async_jobs.hpp"
#include "engine/sim/async_reports.hpp"
#include "engine/sim/divergence.hpp"
#include "engine/sim/driver_parts.hpp"
#include "engine/sim/personal_evaluations.hpp"
#include "engine/sim/round_rules.hpp"
#include "engine/sim/sync_driver.hpp"

namespace drift {
namespace {

class AsyncDriver final : public Driver {
 public:
  AsyncDriver(DriverSetup setup, JobRunner& runner, DriverListener& listener)
      : parts_(setup, runner, listener),
        stages_(parts_.scenario, *parts_.population, parts_.privacy.get()),
        aggregation_(parts_.scenario, std::move(setup.initial_weights), std::move(setup.algorithm), &stages_),
        private_models_(setup.private_models),
        personal_(private_models_ ? parts_.population->size() : 0),
        reports_(parts_.scenario, listener, private_models_ ? &personal_ : nullptr),
        idle_(parts_.scenario.async.concurrency) {}

  void start() override {
    open_report();
    parts_.timeline.apply_due(1, now_);
    if (request_fill()) advance();
  }

  bool finished() const override { return finished_; }

  void on_outcome(std::uint64_t job, JobOutcome outcome) override {
    if (finished_) return;
    auto it = inflight_.find(job);
    if (it == inflight_.end() || it->second.answered) return;
    it->second.answered = true;
    it->second.outcome = std::move(outcome);
    if (holding_) return ready_if_quiet();
    if (!awaiting_selection_ && !advancing_) advance();
  }

  // The rest of advance()'s step after the aggregation it held at: as there, the sampler's
  // answer only dispatches (advancing_ is set), and the loop then applies events.
  void resume() override {
    holding_ = false;
    {
      FlagGuard guard(advancing_);
      if (stopping()) return finish();
      parts_.timeline.apply_due(aggregations_ + 1, now_);
      if (!request_fill()) return;
    }
    advance();
  }

  void archive(StateArchive& ar) override;

  void on_selection(Selection selection) override {
    if (finished_ || !awaiting_selection_ || selection.round != aggregations_ + 1) return;
    awaiting_selection_ = false;
    for (auto c : selection.clients) dispatch(c);
    if (!advancing_) advance();
  }

 private:
  void advance() {
    FlagGuard guard(advancing_);
    while (!finished_) {
      const auto next = earliest_event(inflight_, parts_.roster);
      const bool found = next.found;
      const std::uint64_t best_job = next.job;
      const double best_time = next.time;
      const std::uint32_t best_client = next.client;
      std::uint32_t bound_client = 0;
      const double bound = running_bound(inflight_, parts_.roster, bound_client);
      // Timeline entries at a fixed time go first when nothing can precede them.
      const double timed = parts_.timeline.next_timed_entry();
      if (timed < kNever && (!found || timed <= best_time) && timed < bound) {
        now_ = std::max(now_, timed);
        parts_.timeline.apply_due(aggregations_ + 1, now_);
        if (!request_fill()) return;
        continue;
      }
      if (bound < kNever && (!found || bound < best_time || (bound == best_time && bound_client < best_client))) return;
      if (!found) {
        if (!inflight_.empty()) return;
        if (stopping()) return finish();
        if (!wait_for_clients()) return;
        if (!request_fill()) return;
        continue;
      }
      auto node = inflight_.extract(best_job);
      const bool instant_drop = !node.mapped().launched && best_time <= node.mapped().plan.start;
      idle_.event_applied(best_time, now_);
      now_ = std::max(now_, best_time);
      handle(node.mapped(), best_time);
      if (finished_) return;
      if (hold_requested_) return hold();
      if (stopping()) return finish();
      if (instant_drop && !note_instant_drop()) return;
      parts_.timeline.apply_due(aggregations_ + 1, now_);
      if (!request_fill()) return;
    }
  }

  void handle(InFlight& f, double t) {
    const auto c = f.plan.client;
    parts_.roster.set_busy(c, false);
    if (!f.launched) {
      drop(f, t, t == f.plan.drop_time ? "dropped out" : "went offline");
      return;
    }
    const auto fate = triage(f.plan, f.outcome, parts_.roster);
    if (fate.fate == Fate::lost) return drop(f, t, fate.reason);
    if (fate.fate == Fate::failed) {
      ++report_.failed;
      record(failed_record(c, t, fate.reason));
      return failed_update();
    }
    if (fate.fate == Fate::dropped) {
      report_.discarded_samples += f.outcome.update.num_samples;
      return drop(f, t, fate.reason);
    }
    failed_in_a_row_ = 0;
    auto& u = f.outcome.update;
    // The client's model changed when it trained, whether or not the server uses its upload.
    if (private_models_ && u.personal) personal_.record(c, *u.personal);
    const std::uint64_t staleness = aggregation_.version() - f.plan.model_version;
    parts_.losses.push_back({c, u.metrics.loss});
    ++report_.finished;
    report_.bytes_up += f.outcome.upload_bytes;
    record(arrival_record(ClientEvent::finished, c, t, u.num_samples, u.metrics.steps, u.metrics.loss,
                          f.outcome.upload_bytes, staleness, ""));
    if (aggregation_.add(std::move(u), *f.pulled, staleness, aggregations_ + 1)) return aggregated();
    parts_.listener.on_progress(aggregations_ + 1, aggregation_.buffered(), aggregation_.per_aggregation());
  }

  void drop(const InFlight& f, double t, const std::string& why) {
    ++report_.dropped;
    report_.wasted_compute_seconds += wasted_compute(f.plan, t);
    record(dropped_record(f.plan.client, t, why));
  }

  void aggregated() {
    ++aggregations_;
    auto applied = aggregation_.take_applied();
    std::vector<std::uint32_t> clients;
    for (const auto& u : applied.updates) clients.push_back(u.client_id);
    Accounting::add_training_metrics(report_, applied.updates);
    std::sort(clients.begin(), clients.end());
    report_.staleness = std::move(applied.staleness);
    std::sort(report_.staleness.begin(), report_.staleness.end());
    report_.num_updates = static_cast<std::uint32_t>(applied.updates.size());
    stages_.record(report_, clients, true, applied.dp);
    parts_.accounting.account(report_, clients, std::move(applied.shares));
    report_.round = aggregations_;
    report_.model_version = aggregation_.version();
    report_.time_end = now_;
    report_.total_rounds = parts_.scenario.rounds;
    report_.algorithm = std::move(applied.metrics);
    report_.divergence = divergence_of(report_, global());
    const bool diverged =
        !report_.divergence.empty() && parts_.scenario.simulation.on_divergence == DivergencePolicy::stop;
    const RunEnd end{RunStatus::diverged, report_.divergence};
    reports_.aggregated(std::move(report_), global(), diverged || stopping());
    open_report();
    if (diverged) return finish(end);
    // Only at an aggregation that went out evaluated: no report is held back then.
    hold_requested_ = !reports_.holding() && parts_.listener.wants_checkpoint(aggregations_, stopping());
  }

  // Stops applying events until every launched job has answered, for a checkpoint.
  void hold() {
    hold_requested_ = false;
    holding_ = true;
    ready_signalled_ = false;
    ready_if_quiet();
  }

  void ready_if_quiet() {
    if (ready_signalled_ || !all_answered(inflight_)) return;
    ready_signalled_ = true;
    parts_.listener.on_checkpoint_ready(aggregations_);
  }

  // As many updates failed in a row as an aggregation needs: the model has diverged. The
  // failures go out as an aggregation of nothing, so the run directory shows them.
  void failed_update() {
    const auto why = failed_streak_divergence(++failed_in_a_row_, aggregation_.per_aggregation());
    if (why.empty() || parts_.scenario.simulation.on_divergence != DivergencePolicy::stop) return;
    report_.round = aggregations_ + 1;
    report_.model_version = aggregation_.version();
    report_.time_end = now_;
    report_.total_rounds = parts_.scenario.rounds;
    report_.divergence = why;
    stages_.record(report_, {}, false, {});
    parts_.accounting.account(report_, {}, {});
    reports_.aggregated(std::move(report_), nullptr, false);
    open_report();
    finish({RunStatus::diverged, why});
  }

  const NamedTensors* global() const { return private_models_ ? nullptr : aggregation_.global().get(); }

  void open_report() {
    report_ = RoundReport{};
    report_.time_start = now_;
    parts_.accounting.record_online(report_, now_, parts_.roster);
  }

  bool stopping() const {
    return stop_reached(parts_.scenario, aggregations_, now_) || !parts_.privacy_budget_spent().empty();
  }

  // Ends the run: `reason` says why it ends early (else privacy's budget, if that is spent).
  void finish(std::string reason = "") {
    if (reason.empty() && !stop_reached(parts_.scenario, aggregations_, now_)) reason = parts_.privacy_budget_spent();
    finish(RunEnd{reason.empty() ? RunStatus::completed : RunStatus::ended, reason});
  }
  void finish(const RunEnd& end) {
    if (finished_) return;
    finished_ = true;
    reports_.finish(end, global());
  }

  // Nothing runs and the sampler chose nobody: move virtual time to when someone is online,
  // or the next timeline entry, whichever is first. False when the run ended instead.
  bool wait_for_clients() {
    std::string why;
    if (!idle_.wait(now_, std::min(parts_.roster.next_available(now_), parts_.timeline.next_timed_entry()), why)) {
      finish(why);
      return false;
    }
    parts_.timeline.apply_due(aggregations_ + 1, now_);
    return true;
  }

  // A client dropped the moment it was dispatched: AsyncIdle decides. False when the run ended.
  bool note_instant_drop() {
    std::string why;
    if (idle_.instant_drop(now_, parts_.roster.next_available(now_) <= now_, why)) return true;
    finish(why);
    return false;
  }

  // Asks the sampler for one client per free slot. False while its answer is awaited (a host
  // that answers at once has dispatched them before this returns).
  bool request_fill() {
    const auto running = static_cast<std::int64_t>(inflight_.size());
    if (stopping() || running >= parts_.scenario.async.concurrency) return true;
    if (idle_.stalled(now_) && parts_.roster.next_available(now_) > now_) return true;
    auto request = parts_.selection_request(aggregations_ + 1, now_);
    request.slots = static_cast<std::uint32_t>(parts_.scenario.async.concurrency - running);
    awaiting_selection_ = true;
    parts_.runner.request_selection(request);
    return !awaiting_selection_;
  }

  void dispatch(std::uint32_t c) {
    // One task per model version: the global weights and the server half's broadcast.
    if (!task_ || task_->model_version != aggregation_.version()) {
      task_ = make_task(parts_.scenario, aggregations_ + 1, aggregation_.version(), *aggregation_.global(),
                        aggregation_.broadcast(aggregations_ + 1));
      task_bytes_ = parts_.runner.task_bytes(task_);
    }
    InFlight f;
    f.plan = parts_.planner.plan(c, now_, task_bytes_, aggregation_.version());
    f.pulled = aggregation_.global();
    parts_.roster.set_busy(c, true);
    report_.cohort.push_back(c);
    report_.bytes_down += task_bytes_;
    record(selected_record(c, now_, task_bytes_));
    const double offline = parts_.roster.offline_between(c, now_, f.plan.earliest_finish);
    f.launched = offline >= f.plan.earliest_finish && f.plan.drop_time >= f.plan.earliest_finish;
    const auto job = f.plan.job;
    inflight_.emplace(job, std::move(f));
    if (inflight_.at(job).launched) {
      idle_.launched();
      parts_.runner.launch(job, c, task_);
    }
  }

  void record(ClientRecord r) { report_.clients.push_back(std::move(r)); }

  DriverParts parts_;
  AggregationStages stages_;  // archived by aggregation_, whose buffer it sums
  AsyncAggregation aggregation_;
  bool private_models_ = false;
  PersonalEvaluations personal_;
  AsyncReports reports_;
  std::uint32_t failed_in_a_row_ = 0;  // updates failed since the last one that finished
  double now_ = 0.0;
  std::uint32_t aggregations_ = 0;
  InFlightJobs inflight_;
  std::shared_ptr<const TrainingTask> task_;
  std::uint64_t task_bytes_ = 0;
  RoundReport report_;
  AsyncIdle idle_;
  bool awaiting_selection_ = false;
  bool advancing_ = false;
  bool finished_ = false;
  bool hold_requested_ = false;  // the aggregation just made is to be checkpointed
  bool holding_ = false;
  bool ready_signalled_ = false;
};

// Held after an aggregation: the report in progress was just opened (it is opened again from
// the restored roster), every launched job has its outcome, and the buffer holds only what
// FedBuff collected since. Models the jobs pulled are stored once per version.
void AsyncDriver::archive(StateArchive& ar) {
  ar.section("async driver");
  ar.value(now_);
  ar.value(aggregations_);
  ar.value(failed_in_a_row_);
  idle_.archive(ar);
  parts_.archive(ar);
  aggregation_.archive(ar);
  personal_.archive(ar);
  archive_jobs(ar, inflight_);
  if (ar.loading()) open_report();
}

}  // namespace

std::unique_ptr<Driver> make_async_driver(DriverSetup setup, JobRunner& runner, DriverListener& listener) {
  return std::make_unique<AsyncDriver>(std::move(setup), runner, listener);
}

std::unique_ptr<Driver> make_driver(DriverSetup setup, JobRunner& runner, DriverListener& listener) {
  if (setup.scenario->simulation.mode == SimulationMode::sync)
    return make_sync_driver(std::move(setup), runner, listener);
  return make_async_driver(std::move(setup), runner, listener);
}

}  // namespace drift
