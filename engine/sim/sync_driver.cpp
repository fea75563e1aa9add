// The synchronous driver. A round at virtual time t0: apply the timeline, ask the sampler for
// ceil(over_selection x cohort) clients, plan every task, train the ones that can still
// matter, and when all have answered, replay the round in virtual-time order: the first
// `cohort` updates that arrive before the deadline are aggregated, the rest are late
// (discarded, or kept as stale for the next aggregation); clients that go offline or drop out
// before their upload completes are dropped. The round ends when the last needed update
// arrives, at the deadline, or with its last event. Under [hierarchy] each edge runs such rounds
// of its own clients on its own model, every edge's k-th round side by side (a wave: selections
// edge by edge, all jobs launched, the rounds replayed in edge order once all have answered), and
// the cloud round ends with the cloud's average of the edges' models (engine/sim/edge_tier.hpp);
// a flat round is the one edge round of its cloud round.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "engine/algorithms/model_changes.hpp"
#include "engine/core/phase_times.hpp"
#include "engine/metrics/evaluation.hpp"
#include "engine/sim/aggregation_stages.hpp"
#include "engine/sim/divergence.hpp"
#include "engine/sim/driver_parts.hpp"
#include "engine/sim/edge_tier.hpp"
#include "engine/sim/personal_evaluations.hpp"
#include "engine/sim/round_rules.hpp"
#include "engine/sim/shadow_cohort.hpp"
#include "engine/sim/stale_updates.hpp"
#include "engine/sim/sync_driver.hpp"
#include "engine/sim/sync_jobs.hpp"
#include "engine/sim/sync_replay.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {
namespace {

class SyncDriver final : public Driver {
 public:
  SyncDriver(DriverSetup setup, JobRunner& runner, DriverListener& listener)
      : parts_(setup, runner, listener),
        algorithm_(std::move(setup.algorithm)),
        global_(std::move(setup.initial_weights)),
        private_models_(setup.private_models),
        personal_(private_models_ ? parts_.population->size() : 0),
        shadow_(parts_.scenario, parts_.population->size()),
        stages_(parts_.scenario, *parts_.population, parts_.privacy.get()),
        tier_(parts_.scenario, *parts_.population, parts_.roster.edges(), setup.make_edge_algorithm) {}

  void start() override { begin_round(); }
  bool finished() const override { return finished_; }
  void resume() override { next_round(); }

  // At a round's end nothing is in flight: the world, the model, the server half, the
  // evaluations of private models, shadow jobs and stale updates waiting for a later round.
  void archive(StateArchive& ar) override {
    ar.section("sync driver");
    ar.value(now_);
    ar.value(version_);
    ar.value(round_);
    parts_.archive(ar);
    stages_.archive(ar);
    archive_named(ar, global_);
    personal_.archive(ar);
    shadow_.archive(ar);
    stale_.archive(ar);
    ar.section("server half");
    algorithm_->archive(ar);
    tier_.archive(ar);
    if (tier_.buffered()) archive_records(ar, later_records_);
  }

  void on_outcome(std::uint64_t job, JobOutcome outcome) override {
    if (shadow_.owns(job)) {
      if (shadow_.answer(job, std::move(outcome)) && --outstanding_ == 0 && all_launched()) close_wave();
      return;
    }
    Pending* p = find_job(job);
    if (!p || p->answered) return;
    p->answered = true;
    p->outcome = std::move(outcome);
    ++answered_;
    if (--outstanding_ == 0 && all_launched()) return close_wave();
    parts_.listener.on_progress(round_, answered_, launched_);
  }

  // Selections come edge by edge, each launched as it comes; the wave closes when every job answered.
  void on_selection(Selection selection) override {
    if (!awaiting_selection_ || all_launched() || selection.round != wave_[selecting_].round.serial) return;
    awaiting_selection_ = false;
    launch_round(wave_[selecting_], std::move(selection));
    if (++selecting_ < wave_.size()) return request_selection();
    if (outstanding_ == 0) close_wave();
  }

 private:
  void begin_round() {
    parts_.roster.availability().set_round(round_);
    parts_.timeline.apply_due(round_, now_);
    // Rounds of nobody would "complete" the run with an untrained model: end it, as async does.
    if (parts_.roster.next_available(now_) == kNever && !parts_.timeline.any_pending())
      return end_run({RunStatus::ended, nobody_can_take_part(round_, now_)});
    report_ = RoundReport{};
    report_.clients = std::move(later_records_);
    later_records_.clear();
    report_.round = round_;
    report_.total_rounds = parts_.scenario.rounds;
    report_.time_start = now_;
    parts_.accounting.record_eligible(report_, now_, parts_.roster);
    tier_.begin(round_, now_, global_, tier_.hierarchical() ? floating_bytes(global_) : 0);
    next_wave();
  }

  // The cloud round's next wave of edge rounds (a flat round's only one), or its end. Under
  // cloud = fedbuff the cloud's events come first, and a full buffer ends the "round".
  void next_wave() {
    const auto rounds = tier_.buffered() ? next_buffered_wave() : tier_.next_wave();
    if (rounds.empty()) {
      if (!tier_.buffered()) close_cloud_round();  // (the buffered one closed its step, or ended the run)
      return;
    }
    wave_.clear();
    for (const auto& r : rounds) {
      EdgeRun run;
      run.round = r;
      run.model = &tier_.model(r, global_);
      run.server = &tier_.server(r, *algorithm_);
      wave_.push_back(std::move(run));
    }
    parts_.roster.availability().set_round(rounds.front().serial);  // a wave's rounds share their serial
    selecting_ = 0;
    outstanding_ = 0;
    answered_ = launched_ = 0;
    request_selection();
  }

  // fedbuff: the running edges' next rounds, once the events before them are applied; empty when
  // the buffer filled (the cloud round is closed) or the run ended.
  std::vector<EdgeRound> next_buffered_wave() {
    const double limit = parts_.scenario.simulation.max_virtual_time;
    for (std::uint64_t tries = 0;; ++tries) {
      if (tier_.advance(global_, parts_.roster)) {
        close_cloud_round();
        return {};
      }
      auto rounds = tier_.next_wave();
      const auto past_limit = [&](const EdgeRound& r) { return r.start > limit; };
      if (limit > 0 && !rounds.empty() && std::all_of(rounds.begin(), rounds.end(), past_limit)) {
        // The edges ran past the time limit before the buffer filled: the run is over, and
        // says why when it never stepped.
        if (round_ > 1)
          end_run({});
        else
          end_run({RunStatus::ended, "the edges reached simulation.max_virtual_time before the cloud's first step (" +
                                         tier_.since_last_step() + ")"});
        return {};
      }
      if (!rounds.empty()) return rounds;
      // Every running edge went offline before its next round: they pull again when back.
      if (tier_.next_event() == kNever || tries > 1000000) {
        end_run({RunStatus::ended,
                 "no edge can send a model again: each is offline for good, its clients "
                 "cannot take part, or it goes offline before every loop's first round"});
        return {};
      }
    }
  }

  void request_selection() {
    const auto& r = wave_[selecting_].round;
    auto request = parts_.selection_request(r.serial, r.start);
    request.over_selection = parts_.scenario.simulation.over_selection;
    request.edge = r.edge == kFlatEdge ? 0 : r.edge + 1;
    awaiting_selection_ = true;
    parts_.runner.request_selection(request);
  }

  bool all_launched() const { return selecting_ >= wave_.size(); }

  Pending* find_job(std::uint64_t job) {
    for (auto& run : wave_)
      if (auto it = run.jobs.find(job); it != run.jobs.end()) return &it->second;
    return nullptr;
  }

  void launch_round(EdgeRun& run, Selection selection) {
    const auto selected = std::move(selection.clients);
    report_.cohort.insert(report_.cohort.end(), selected.begin(), selected.end());
    const double start = run.round.start;
    const auto serial = run.round.serial;
    run.planned_events_end = start;
    run.needed = std::min<std::uint32_t>(selection.cohort_size, static_cast<std::uint32_t>(selected.size()));
    run.version = version_;
    auto task = make_task(parts_.scenario, serial, version_, *run.model, run.server->broadcast(serial));
    const std::uint64_t down = selected.empty() ? 0 : parts_.runner.task_bytes(task);
    const double deadline = parts_.timeline.deadline();
    const double deadline_at = deadline > 0 ? start + deadline : kNever;
    parts_.planner.draw_stragglers(serial, selected, run.round.edge == kFlatEdge ? 0 : run.round.edge + 1);
    for (auto c : selected) {
      Pending p;
      p.plan = parts_.planner.plan(c, start, down, version_, deadline_at);
      record(selected_record(c, start, down));
      report_.bytes_down += down;
      const auto decision =
          decide_launch(p.plan, start, parts_.roster.offline_between(c, start, p.plan.earliest_finish), deadline_at,
                        parts_.scenario.simulation);
      if (decision.kind != LaunchDecision::train)
        run.planned_events_end = std::max(run.planned_events_end, decision.at);
      if (decision.kind == LaunchDecision::drop) {
        record_drop(report_, c, decision.at, p.plan, decision.why);
        continue;
      }
      if (decision.kind == LaunchDecision::late) {
        ++report_.late;
        report_.wasted_compute_seconds += wasted_compute(p.plan);
        record(untrained_late_record(c, decision.at, parts_.population->num_samples[c], decision.why));
        parts_.roster.work_until(c, decision.at);
        continue;
      }
      parts_.roster.set_busy(c, true);
      run.jobs.emplace(p.plan.job, p);
    }
    outstanding_ += run.jobs.size();
    launched_ += static_cast<std::uint32_t>(run.jobs.size());
    launch_by_task(run, task);
    outstanding_ += shadow_.launch(serial, selected, task, parts_.runner);
  }

  // The round's jobs, in job order within each group whose task is the same: the round's
  // (`task`), or one with the model the algorithm keeps for them (FedAWE) or a step cut.
  void launch_by_task(EdgeRun& run, const std::shared_ptr<TrainingTask>& task) {
    JobLaunches jobs;
    for (const auto& [id, p] : run.jobs) jobs.emplace_back(id, p.plan.client);
    for (const auto& g : group_jobs(jobs, [&](std::uint64_t job, std::uint32_t c) {
           return JobGroup{run.server->start_model(c), run.jobs.at(job).plan.max_steps, {}};
         })) {
      parts_.runner.launch_round(g.jobs, task_of_group(g, task));
    }
  }

  void close_wave() {
    for (auto& run : wave_) close_edge_round(run);
    next_wave();
  }

  void close_edge_round(EdgeRun& run) {
    // Drops and certain lates decided before training count as events too: a round whose every
    // task dropped ends when the server learns of the last drop, not where it began (time ran
    // backwards into the next round otherwise).
    double last_event = std::max(run.round.start, run.planned_events_end);
    auto arrivals = sort_out_jobs(run, parts_, private_models_ ? &personal_ : nullptr, report_, last_event);
    std::vector<ClientUpdate> accepted;
    std::vector<StaleUpdate> newly_late;
    double end = accept_arrivals(run, arrivals, last_event, parts_, report_, accepted, newly_late);
    // Stale updates from earlier rounds that have arrived by the end join this aggregation.
    for (auto& u : stale_.take_arrived(end, version_, report_.clients)) accepted.push_back(std::move(u));
    for (auto& s : newly_late) stale_.keep(std::move(s));
    std::vector<std::uint32_t> aggregated;
    ClientShares shares;
    const bool moved = aggregate(run, accepted, end, aggregated, shares);
    tier_.finish(run.round, end, aggregated, std::move(shares), moved);
  }

  void close_cloud_round() {
    std::vector<std::uint32_t> aggregated;
    ClientShares shares;
    const double end = tier_.close(global_, report_, aggregated, shares);
    if (tier_.buffered()) hold_later_records(end);
    parts_.accounting.account(report_, aggregated, std::move(shares));
    report_.model_version = version_;
    report_.time_end = end;
    std::stable_sort(report_.clients.begin(), report_.clients.end(), [](const ClientRecord& a, const ClientRecord& b) {
      return a.time != b.time ? a.time < b.time : a.client_id < b.client_id;
    });
    now_ = end;
    report_.divergence = divergence_of(report_, private_models_ ? nullptr : &global_);
    const bool diverged =
        !report_.divergence.empty() && parts_.scenario.simulation.on_divergence == DivergencePolicy::stop;
    RunEnd run_end;
    if (diverged) run_end = {RunStatus::diverged, report_.divergence};
    const bool last = diverged || stop_reached(parts_.scenario, round_, now_) || !parts_.privacy_budget_spent().empty();
    const bool evaluate = evaluation_due(parts_.scenario, round_, last);
    if (last) report_.total_rounds = round_;
    if (private_models_) {
      if (evaluate) personal_.report(report_);
      parts_.listener.on_aggregation(std::move(report_), nullptr);
    } else {
      parts_.listener.on_aggregation(std::move(report_), evaluate ? &global_ : nullptr);
    }
    if (diverged) return end_run(run_end);
    if (parts_.listener.wants_checkpoint(round_, last)) return parts_.listener.on_checkpoint_ready(round_);
    next_round();
  }

  // After a round (and its checkpoint, if one was taken): the next round, or the end.
  void next_round() {
    if (stop_reached(parts_.scenario, round_, now_)) return end_run({});
    if (auto spent = parts_.privacy_budget_spent(); !spent.empty()) return end_run({RunStatus::ended, spent});
    ++round_;
    begin_round();
  }

  void end_run(const RunEnd& end) {
    finished_ = true;
    parts_.listener.on_finished(end);
  }

  // The accepted updates in client-id order into the edge round's model, if there are at least
  // min_cohort of them (and, under secure aggregation, the protocol's survivors, if it completes:
  // then it ends the round). Returns whether the model moved; `aggregated` and `shares` say whose
  // updates moved it, and how much.
  bool aggregate(EdgeRun& run, std::vector<ClientUpdate>& accepted, double& end, std::vector<std::uint32_t>& aggregated,
                 ClientShares& shares) {
    const PhaseScope timed("server: aggregate");
    const auto serial = run.round.serial;
    auto& model = *run.model;
    std::sort(accepted.begin(), accepted.end(),
              [](const ClientUpdate& a, const ClientUpdate& b) { return a.client_id < b.client_id; });
    const bool enough = !accepted.empty() &&
                        static_cast<std::int64_t>(accepted.size()) >= parts_.scenario.simulation.min_cohort &&
                        stages_.secure(round_, run.protocol_start, model, accepted, parts_.roster, report_, end);
    bool moved = false;
    if (enough) {
      for (const auto& u : accepted) aggregated.push_back(u.client_id);
      // Staleness against the version the run's task carried: an edge aggregating earlier in
      // the wave does not make this edge's updates stale. (In a flat run it is version_.)
      const auto input = aggregation_input(serial, run.version, accepted);
      report_.staleness.insert(report_.staleness.end(), input.staleness.begin(), input.staleness.end());
      std::sort(report_.staleness.begin(), report_.staleness.end());
      shadow_.report(report_, model, accepted, version_);
      Accounting::add_training_metrics(report_, accepted);
      stages_.privatise(model, accepted, round_);  // the server half sees only the private model
      tier_.localise(run.round, accepted);
      run.server->aggregate(model, accepted, input);
      tier_.record_metrics(run.round, run.server->metrics(), aggregated, report_);
      shares = run.server->shares(accepted);
      tier_.globalise(run.round, accepted, shares);
      ++version_;
      moved = true;
    } else {
      for (const auto& u : accepted) report_.discarded_samples += u.num_samples;
      if (run.server->aggregate_nothing(model, AggregationInput{serial})) {
        tier_.record_metrics(run.round, run.server->metrics(), {}, report_);
        shares = run.server->shares({});
        std::vector<ClientUpdate> none;
        tier_.globalise(run.round, none, shares);
        ++version_;
        moved = true;
      }
    }
    report_.num_updates += static_cast<std::uint32_t>(aggregated.size());
    report_partial_work(report_, enough ? accepted : std::vector<ClientUpdate>{}, parts_.scenario);
    stages_.record(report_, aggregated, enough);
    return moved;
  }

  void record(ClientRecord r) { report_.clients.push_back(std::move(r)); }

  // fedbuff: an edge may run rounds past the cloud step that closes this report; what its clients
  // did after the step goes into the next one.
  void hold_later_records(double end) {
    auto& records = report_.clients;
    const auto later =
        std::stable_partition(records.begin(), records.end(), [&](const ClientRecord& r) { return r.time <= end; });
    later_records_.assign(std::make_move_iterator(later), std::make_move_iterator(records.end()));
    records.erase(later, records.end());
  }

  DriverParts parts_;
  std::unique_ptr<ServerAlgorithm> algorithm_;
  NamedTensors global_;
  bool private_models_ = false;
  PersonalEvaluations personal_;
  ShadowCohort shadow_;
  AggregationStages stages_;
  double now_ = 0.0;
  std::uint64_t version_ = 0;
  std::uint32_t round_ = 1;
  bool awaiting_selection_ = false;
  RoundReport report_;
  std::vector<EdgeRun> wave_;    // the edge rounds running side by side (a flat round's only one)
  std::size_t selecting_ = 0;    // the run whose selection is awaited; wave_.size() once all launched
  std::size_t outstanding_ = 0;  // jobs (and shadow jobs) not answered yet
  std::uint32_t answered_ = 0;   // the wave's own jobs answered so far
  std::uint32_t launched_ = 0;   // ... and launched
  StaleUpdates stale_;
  EdgeTier tier_;
  std::vector<ClientRecord> later_records_;  // fedbuff: for the next report
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<Driver> make_sync_driver(DriverSetup setup, JobRunner& runner, DriverListener& listener) {
  return std::make_unique<SyncDriver>(std::move(setup), runner, listener);
}

}  // namespace drift
