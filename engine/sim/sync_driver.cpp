// The synchronous driver. A round at virtual time t0: apply the timeline, ask the sampler for
// ceil(over_selection x cohort) clients, plan every task, train the ones that can still
// matter, and when all have answered, replay the round in virtual-time order: the first
// `cohort` updates that arrive before the deadline are aggregated, the rest are late
// (discarded, or kept as stale for the next aggregation); clients that go offline or drop out
// before their upload completes are dropped. The round ends when the last needed update
// arrives, at the deadline, or with its last event. Under [hierarchy] each edge runs such rounds
// of its own clients on its own model, every edge's k-th round side by side (a wave: selections
// edge by edge, all jobs launched, the rounds replayed in edge order once all have answered), and
// the cloud round ends with the cloud's average of the edges' models. Who holds a round's model
// and what a cloud round is made of is the round tier's, chosen at composition
// (engine/sim/round_tier.hpp): a flat round is the one round of its cloud round.
#include <algorithm>

#include "engine/core/phase_times.hpp"
#include "engine/metrics/evaluation.hpp"
#include "engine/sim/aggregation_stages.hpp"
#include "engine/sim/divergence.hpp"
#include "engine/sim/driver_parts.hpp"
#include "engine/sim/personal_evaluations.hpp"
#include "engine/sim/round_rules.hpp"
#include "engine/sim/round_tier.hpp"
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
        tier_(make_round_tier(setup, parts_.roster.edges())),
        global_(std::move(setup.initial_weights)),
        private_models_(setup.private_models),
        personal_(private_models_ ? parts_.population->size() : 0),
        shadow_(parts_.scenario, *parts_.population),
        stages_(parts_.scenario, *parts_.population, parts_.privacy.get()) {}

  void start() override { begin_round(); }
  bool finished() const override { return finished_; }
  void resume() override { next_round(); }

  // At a round's end nothing is in flight: the world, the model, the evaluations of private
  // models, shadow jobs and stale updates waiting for a later round, then the tier (the server
  // half or halves).
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
    tier_->archive(ar);
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

  // Selections come edge by edge, each launched as its task is ready; the wave closes when every
  // job answered.
  void on_selection(Selection selection) override {
    if (!awaiting_selection_ || all_launched() || selection.round != wave_[selecting_].round.serial) return;
    awaiting_selection_ = false;
    auto& run = wave_[selecting_];
    auto launch = [this, &run, selection = std::move(selection)](std::shared_ptr<TrainingTask> task) mutable {
      launch_round(run, std::move(selection), task);
      if (++selecting_ < wave_.size()) return request_selection();
      if (outstanding_ == 0) close_wave();
    };
    tier_->task(run.round, version_, global_, launch);
  }

 private:
  void begin_round() {
    parts_.roster.availability().set_round(round_);
    parts_.timeline.apply_due(round_, now_);
    // Rounds of nobody would "complete" the run with an untrained model: end it, as async does.
    if (!parts_.roster.anyone_available(now_) && !parts_.timeline.any_pending())
      return end_run({RunStatus::ended, nobody_can_take_part(round_, now_)});
    report_ = RoundReport{};
    report_.round = round_;
    report_.total_rounds = parts_.scenario.rounds;
    report_.time_start = now_;
    parts_.accounting.record_eligible(report_, now_, parts_.roster);
    if (auto gone = tier_->begin(round_, now_, global_, report_); !gone.empty())
      return end_run({RunStatus::ended, std::move(gone)});
    next_wave();
  }

  // The cloud round's next wave of rounds (a flat round's only one), or its step, or the end.
  void next_wave() {
    auto next =
        tier_->next(global_, parts_.roster, parts_.scenario.simulation.max_virtual_time, parts_.listener.stop_asked());
    if (next.step) close_cloud_round();
    if (next.ended)
      end_run(next.why.empty() ? RunEnd{} : RunEnd{next.stopped ? RunStatus::stopped : RunStatus::ended, next.why});
    if (next.rounds.empty()) return;
    wave_.clear();
    for (const auto& r : next.rounds) {
      RoundRun run;
      run.round = r;
      wave_.push_back(std::move(run));
    }
    parts_.roster.availability().set_round(next.rounds.front().serial);  // a wave's rounds share their serial
    selecting_ = 0;
    outstanding_ = 0;
    answered_ = launched_ = 0;
    request_selection();
  }

  void request_selection() {
    const auto& r = wave_[selecting_].round;
    auto request = parts_.selection_request(r.serial, r.start);
    request.over_selection = parts_.scenario.simulation.over_selection;
    request.edge = r.sampler_edge();
    awaiting_selection_ = true;
    parts_.runner.request_selection(request);
  }

  bool all_launched() const { return selecting_ >= wave_.size(); }

  Pending* find_job(std::uint64_t job) {
    for (auto& run : wave_)
      if (auto it = run.jobs.find(job); it != run.jobs.end()) return &it->second;
    return nullptr;
  }

  void launch_round(RoundRun& run, Selection selection, const std::shared_ptr<TrainingTask>& task) {
    const auto selected = std::move(selection.clients);
    report_.cohort.insert(report_.cohort.end(), selected.begin(), selected.end());
    const double start = run.round.start;
    const auto serial = run.round.serial;
    run.planned_events_end = start;
    run.needed = std::min<std::uint32_t>(selection.cohort_size, static_cast<std::uint32_t>(selected.size()));
    run.version = version_;
    const std::uint64_t down = selected.empty() ? 0 : parts_.runner.task_bytes(task);
    const double deadline = parts_.timeline.deadline();
    const double deadline_at = deadline > 0 ? start + deadline : kNever;
    parts_.planner.draw_stragglers(serial, selected, run.round.sampler_edge());
    for (auto c : selected) {
      Pending p;
      p.plan = parts_.planner.plan(c, start, down, version_, deadline_at);
      record(selected_record(c, start, down));
      report_.bytes_down += down;
      if (!launch_decided(run, p.plan, deadline_at, parts_, report_)) continue;
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
  void launch_by_task(RoundRun& run, const std::shared_ptr<TrainingTask>& task) {
    JobLaunches jobs;
    for (const auto& [id, p] : run.jobs) jobs.emplace_back(id, p.plan.client);
    for (const auto& g : group_jobs(jobs, [&](std::uint64_t job, std::uint32_t c) {
           return JobGroup{tier_->start_model(run.round, c), run.jobs.at(job).plan.max_steps, {}};
         })) {
      parts_.runner.launch_round(g.jobs, task_of_group(g, task));
    }
  }

  // The wave's edge rounds close one after another, in edge order, each once its aggregation
  // has answered; then the next wave.
  void close_wave() {
    closing_ = 0;
    close_next_run();
  }

  void close_next_run() {
    if (closing_ == wave_.size()) return next_wave();
    auto& run = wave_[closing_];
    // Drops and certain lates decided before training count as events too: a round whose every
    // task dropped ends when the server learns of the last drop, not where it began (time ran
    // backwards into the next round otherwise).
    double last_event = std::max(run.round.start, run.planned_events_end);
    auto arrivals = sort_out_jobs(run, parts_, private_models_ ? &personal_ : nullptr, report_, last_event);
    auto& c = closing_run_;
    c = ClosingRun{};
    std::vector<StaleUpdate> newly_late;
    c.end = accept_arrivals(run, arrivals, last_event, parts_, report_, c.accepted, newly_late);
    // Stale updates from earlier rounds that have arrived by the end join this aggregation.
    for (auto& u : stale_.take_arrived(c.end, version_, report_.clients)) c.accepted.push_back(std::move(u));
    for (auto& s : newly_late) stale_.keep(std::move(s));
    aggregate(run);
  }

  void close_cloud_round() {
    tier_->close(global_, report_, [this](CloudStep step) { after_cloud_step(std::move(step)); });
  }

  void after_cloud_step(CloudStep step) {
    const double end = step.end;
    parts_.accounting.account(report_, step.aggregated, std::move(step.shares));
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
    if (parts_.listener.wants_checkpoint(round_, last))
      return tier_->after_host([this] { parts_.listener.on_checkpoint_ready(round_); });
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

  // The accepted updates in client-id order into the edge round's model (the global one, or the
  // edge host's), if there are at least min_cohort of them (and, under secure aggregation, the
  // protocol's survivors, if it completes: then it ends the round); then the round is finished
  // with whose updates moved the model, and how much.
  void aggregate(RoundRun& run) {
    auto& c = closing_run_;
    auto& accepted = c.accepted;
    const auto serial = run.round.serial;
    std::sort(accepted.begin(), accepted.end(),
              [](const ClientUpdate& a, const ClientUpdate& b) { return a.client_id < b.client_id; });
    {
      const PhaseScope timed("server: aggregate");
      // (Under [hierarchy] there is no privacy, secure aggregation or shadow cohort: global_ stands in.)
      c.enough = !accepted.empty() &&
                 static_cast<std::int64_t>(accepted.size()) >= parts_.scenario.simulation.min_cohort &&
                 stages_.secure(round_, run.protocol_start, global_, accepted, parts_.roster, report_, c.end);
    }
    AggregationInput input{serial};
    std::vector<ClientUpdate> updates;
    if (c.enough) {
      for (const auto& u : accepted) c.aggregated.push_back(u.client_id);
      // Staleness against the version the run's task carried: an edge aggregating earlier in
      // the wave does not make this edge's updates stale. (In a flat run it is version_.)
      input = aggregation_input(serial, run.version, accepted);
      report_.staleness.insert(report_.staleness.end(), input.staleness.begin(), input.staleness.end());
      std::sort(report_.staleness.begin(), report_.staleness.end());
      shadow_.report(report_, global_, accepted, version_);
      Accounting::add_training_metrics(report_, accepted);
      stages_.privatise(global_, accepted, round_);  // the server half sees only the private model
      updates = accepted;
    } else {
      for (const auto& u : accepted) report_.discarded_samples += u.num_samples;
    }
    tier_->aggregate(run.round, global_, std::move(updates), input,
                     [this, &run](EdgeAggregated a) { finish_round(run, std::move(a)); });
  }

  void finish_round(RoundRun& run, EdgeAggregated a) {
    auto& c = closing_run_;
    if (a.moved) ++version_;
    report_.num_updates += static_cast<std::uint32_t>(c.aggregated.size());
    report_partial_work(report_, c.enough ? c.accepted : std::vector<ClientUpdate>{}, parts_.scenario);
    stages_.record(report_, c.aggregated, c.enough);
    tier_->finish(run.round, c.end, c.aggregated, std::move(a), report_);
    ++closing_;
    close_next_run();
  }

  void record(ClientRecord r) { report_.clients.push_back(std::move(r)); }

  DriverParts parts_;
  std::unique_ptr<RoundTier> tier_;
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
  std::vector<RoundRun> wave_;   // the rounds running side by side (a flat round's only one)
  std::size_t selecting_ = 0;    // the run whose selection is awaited; wave_.size() once all launched
  std::size_t outstanding_ = 0;  // jobs (and shadow jobs) not answered yet
  std::size_t closing_ = 0;      // the run closing (wave_.size(): all closed)
  ClosingRun closing_run_;       // ... what it accepted, while its aggregation is asked
  std::uint32_t answered_ = 0;   // the wave's own jobs answered so far
  std::uint32_t launched_ = 0;   // ... and launched
  StaleUpdates stale_;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<Driver> make_sync_driver(DriverSetup setup, JobRunner& runner, DriverListener& listener) {
  return std::make_unique<SyncDriver>(std::move(setup), runner, listener);
}

}  // namespace drift
