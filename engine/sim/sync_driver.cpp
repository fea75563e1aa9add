// The synchronous driver. A round at virtual time t0: apply the timeline, ask the sampler for
// ceil(over_selection x cohort) clients, plan every task, train the ones that can still
// matter, and when all have answered, replay the round in virtual-time order: the first
// `cohort` updates that arrive before the deadline are aggregated, the rest are late
// (discarded, or kept as stale for the next aggregation); clients that go offline or drop out
// before their upload completes are dropped. The round ends when the last needed update
// arrives, at the deadline, or with its last event. Under [hierarchy] each edge runs such rounds
// of its own clients on its own model, and the cloud round ends with the cloud's average of the
// edges' models (engine/sim/edge_tier.hpp); a flat round is the one edge round of its cloud round.
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
        tier_(parts_.scenario, *parts_.population, setup.make_edge_algorithm) {}

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
  }

  void on_outcome(std::uint64_t job, JobOutcome outcome) override {
    if (shadow_.owns(job)) {
      if (shadow_.answer(job, std::move(outcome)) && --outstanding_ == 0) close_edge_round();
      return;
    }
    auto it = jobs_.find(job);
    if (it == jobs_.end() || it->second.answered) return;
    it->second.answered = true;
    it->second.outcome = std::move(outcome);
    ++answered_;
    if (--outstanding_ == 0) return close_edge_round();
    parts_.listener.on_progress(round_, answered_, static_cast<std::uint32_t>(jobs_.size()));
  }

  void on_selection(Selection selection) override {
    if (!awaiting_selection_ || selection.round != edge_round_.serial) return;
    awaiting_selection_ = false;
    launch_round(std::move(selection));
  }

 private:
  void begin_round() {
    parts_.roster.availability().set_round(round_);
    parts_.timeline.apply_due(round_, now_);
    // Rounds of nobody would "complete" the run with an untrained model: end it, as async does.
    if (parts_.roster.next_available(now_) == kNever && !parts_.timeline.any_pending())
      return end_run({RunStatus::ended, nobody_can_take_part(round_, now_)});
    report_ = RoundReport{};
    report_.round = round_;
    report_.total_rounds = parts_.scenario.rounds;
    report_.time_start = now_;
    parts_.accounting.record_eligible(report_, now_, parts_.roster);
    tier_.begin(round_, now_, global_, tier_.hierarchical() ? floating_bytes(global_) : 0);
    next_edge_round();
  }

  // The cloud round's next edge round (a flat round's only one), or its end.
  void next_edge_round() {
    if (!tier_.next(edge_round_)) return close_cloud_round();
    model_ = &tier_.model(edge_round_, global_);
    server_ = &tier_.server(edge_round_, *algorithm_);
    parts_.roster.availability().set_round(edge_round_.serial);
    jobs_.clear();
    auto request = parts_.selection_request(edge_round_.serial, edge_round_.start);
    request.over_selection = parts_.scenario.simulation.over_selection;
    request.edge = edge_round_.edge == kFlatEdge ? 0 : edge_round_.edge + 1;
    awaiting_selection_ = true;
    parts_.runner.request_selection(request);
  }

  void launch_round(Selection selection) {
    const auto selected = std::move(selection.clients);
    report_.cohort.insert(report_.cohort.end(), selected.begin(), selected.end());
    const double start = edge_round_.start;
    const auto serial = edge_round_.serial;
    planned_events_end_ = start;
    needed_ = std::min<std::uint32_t>(selection.cohort_size, static_cast<std::uint32_t>(selected.size()));
    auto task = make_task(parts_.scenario, serial, version_, *model_, server_->broadcast(serial));
    const std::uint64_t down = selected.empty() ? 0 : parts_.runner.task_bytes(task);
    const double deadline = parts_.timeline.deadline();
    const double deadline_at = deadline > 0 ? start + deadline : kNever;
    parts_.planner.draw_stragglers(serial, selected);
    for (auto c : selected) {
      Pending p;
      p.plan = parts_.planner.plan(c, start, down, version_, deadline_at);
      record(selected_record(c, start, down));
      report_.bytes_down += down;
      const auto decision =
          decide_launch(p.plan, start, parts_.roster.offline_between(c, start, p.plan.earliest_finish), deadline_at,
                        parts_.scenario.simulation);
      if (decision.kind != LaunchDecision::train) planned_events_end_ = std::max(planned_events_end_, decision.at);
      if (decision.kind == LaunchDecision::drop) {
        drop(c, decision.at, p.plan, decision.why);
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
      jobs_.emplace(p.plan.job, p);
    }
    outstanding_ = jobs_.size();
    answered_ = 0;
    launch_by_task(task);
    outstanding_ += shadow_.launch(serial, selected, task, parts_.runner);
    if (outstanding_ == 0) close_edge_round();
  }

  // The round's jobs, in job order within each group whose task is the same: the round's
  // (`task`), or one with the model the algorithm keeps for them (FedAWE) or a step cut.
  void launch_by_task(const std::shared_ptr<TrainingTask>& task) {
    JobLaunches jobs;
    for (const auto& [id, p] : jobs_) jobs.emplace_back(id, p.plan.client);
    for (const auto& g : group_jobs(jobs, [&](std::uint64_t job, std::uint32_t c) {
           return JobGroup{server_->start_model(c), jobs_.at(job).plan.max_steps, {}};
         })) {
      parts_.runner.launch_round(g.jobs, task_of_group(g, task));
    }
  }

  // Every answered job in job order: drops, failures and the updates that arrived, by time.
  std::vector<Arrival> sort_out_jobs(double& last_event) {
    std::vector<Arrival> arrivals;
    for (auto& [id, p] : jobs_) {
      const auto c = p.plan.client;
      parts_.roster.set_busy(c, false);
      // The client's model changed when it trained, whether or not the server uses its upload.
      if (private_models_ && p.outcome.ok && p.outcome.update.personal) personal_.record(c, *p.outcome.update.personal);
      const auto fate = triage(p.plan, p.outcome, parts_.roster);
      switch (fate.fate) {
        case Fate::lost:  // its device vanished (a worker died): to the federation, a dropout
          drop(c, fate.time, p.plan, fate.reason);
          break;
        case Fate::failed:
          ++report_.failed;
          record(failed_record(c, fate.time, fate.reason));
          break;
        case Fate::dropped:
          drop(c, fate.time, p.plan, fate.reason);
          report_.discarded_samples += p.outcome.update.num_samples;
          break;
        case Fate::arrived:
          parts_.losses.push_back({c, p.outcome.update.metrics.loss});
          arrivals.push_back({fate.time, c, &p});
          continue;
      }
      last_event = std::max(last_event, fate.time);
    }
    std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) {
      return a.time != b.time ? a.time < b.time : a.client < b.client;
    });
    return arrivals;
  }

  // The first `needed_` arrivals before the deadline are accepted; the rest are late. Returns
  // when the round ends.
  double accept(std::vector<Arrival>& arrivals, double last_event, std::vector<ClientUpdate>& accepted,
                std::vector<StaleUpdate>& newly_late) {
    const double deadline = parts_.timeline.deadline();
    const double deadline_at = deadline > 0 ? edge_round_.start + deadline : kNever;
    double end = edge_round_.start, trained = edge_round_.start;
    for (auto& a : arrivals) {
      auto& o = a.job->outcome;
      const auto& u = o.update;
      if (accepted.size() < needed_ && a.time <= deadline_at) {
        record(arrival_record(ClientEvent::finished, a.client, a.time, u.num_samples, u.metrics.steps, u.metrics.loss,
                              o.upload_bytes, 0, ""));
        report_.bytes_up += o.upload_bytes;
        ++report_.finished;
        end = std::max(end, a.time);
        trained = std::max(trained, a.job->plan.compute_end);
        accepted.push_back(std::move(o.update));
        continue;
      }
      ++report_.late;
      report_.bytes_up += o.upload_bytes;
      parts_.roster.work_until(a.client, a.time);
      last_event = std::max(last_event, a.time);
      const bool keep = parts_.scenario.simulation.late_updates == LateUpdates::stale;
      record(arrival_record(ClientEvent::late, a.client, a.time, u.num_samples, u.metrics.steps, u.metrics.loss,
                            o.upload_bytes, 0, keep ? "kept as stale" : "discarded"));
      if (keep) {
        newly_late.push_back({a.time, std::move(o.update), o.upload_bytes});
      } else {
        report_.discarded_samples += u.num_samples;
        report_.wasted_compute_seconds += wasted_compute(a.job->plan);
      }
    }
    if (accepted.size() < needed_) end = deadline_at < kNever ? deadline_at : std::max(end, last_event);
    protocol_start_ = accepted.size() < needed_ ? end : trained;  // secure aggregation begins after training
    return end;
  }

  void close_edge_round() {
    // Drops and certain lates decided before training count as events too: a round whose every
    // task dropped ends when the server learns of the last drop, not where it began (time ran
    // backwards into the next round otherwise).
    double last_event = std::max(edge_round_.start, planned_events_end_);
    auto arrivals = sort_out_jobs(last_event);
    std::vector<ClientUpdate> accepted;
    std::vector<StaleUpdate> newly_late;
    double end = accept(arrivals, last_event, accepted, newly_late);
    // Stale updates from earlier rounds that have arrived by the end join this aggregation.
    for (auto& u : stale_.take_arrived(end, version_, report_.clients)) accepted.push_back(std::move(u));
    for (auto& s : newly_late) stale_.keep(std::move(s));
    std::vector<std::uint32_t> aggregated;
    ClientShares shares;
    const bool moved = aggregate(accepted, end, aggregated, shares);
    tier_.finish(edge_round_, end, aggregated, std::move(shares), moved);
    next_edge_round();
  }

  void close_cloud_round() {
    std::vector<std::uint32_t> aggregated;
    ClientShares shares;
    const double end = tier_.close(global_, report_, aggregated, shares);
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
  bool aggregate(std::vector<ClientUpdate>& accepted, double& end, std::vector<std::uint32_t>& aggregated,
                 ClientShares& shares) {
    const PhaseScope timed("server: aggregate");
    const auto serial = edge_round_.serial;
    auto& model = *model_;
    std::sort(accepted.begin(), accepted.end(),
              [](const ClientUpdate& a, const ClientUpdate& b) { return a.client_id < b.client_id; });
    const bool enough = !accepted.empty() &&
                        static_cast<std::int64_t>(accepted.size()) >= parts_.scenario.simulation.min_cohort &&
                        stages_.secure(round_, protocol_start_, model, accepted, parts_.roster, report_, end);
    bool moved = false;
    if (enough) {
      for (const auto& u : accepted) aggregated.push_back(u.client_id);
      const auto input = aggregation_input(serial, version_, accepted);
      report_.staleness.insert(report_.staleness.end(), input.staleness.begin(), input.staleness.end());
      std::sort(report_.staleness.begin(), report_.staleness.end());
      shadow_.report(report_, model, accepted, version_);
      Accounting::add_training_metrics(report_, accepted);
      stages_.privatise(model, accepted, round_);  // the server half sees only the private model
      tier_.localise(edge_round_, accepted);
      server_->aggregate(model, accepted, input);
      report_.algorithm = server_->metrics();
      shares = server_->shares(accepted);
      tier_.globalise(edge_round_, accepted, shares);
      ++version_;
      moved = true;
    } else {
      for (const auto& u : accepted) report_.discarded_samples += u.num_samples;
      if (server_->aggregate_nothing(model, AggregationInput{serial})) {
        report_.algorithm = server_->metrics();
        shares = server_->shares({});
        std::vector<ClientUpdate> none;
        tier_.globalise(edge_round_, none, shares);
        ++version_;
        moved = true;
      }
    }
    report_.num_updates += static_cast<std::uint32_t>(aggregated.size());
    report_partial_work(report_, enough ? accepted : std::vector<ClientUpdate>{}, parts_.scenario);
    stages_.record(report_, aggregated, enough);
    return moved;
  }

  double planned_events_end_ = 0.0;  // the latest drop or late decided when the round launched

  void drop(std::uint32_t c, double at, const TaskPlan& plan, const std::string& why) {
    ++report_.dropped;
    report_.wasted_compute_seconds += wasted_compute(plan, at);
    record(dropped_record(c, at, why));
  }

  void record(ClientRecord r) { report_.clients.push_back(std::move(r)); }

  DriverParts parts_;
  std::unique_ptr<ServerAlgorithm> algorithm_;
  NamedTensors global_;
  bool private_models_ = false;
  PersonalEvaluations personal_;
  ShadowCohort shadow_;
  AggregationStages stages_;
  double protocol_start_ = 0.0;  // when the accepted clients had trained
  double now_ = 0.0;
  std::uint64_t version_ = 0;
  std::uint32_t round_ = 1;
  std::uint32_t needed_ = 0;
  bool awaiting_selection_ = false;
  RoundReport report_;
  std::map<std::uint64_t, Pending> jobs_;  // by job id
  std::size_t outstanding_ = 0;            // jobs (and shadow jobs) not answered yet
  std::uint32_t answered_ = 0;             // the round's own jobs answered so far
  StaleUpdates stale_;
  EdgeTier tier_;
  EdgeRound edge_round_;               // the edge round running (a flat round's only one)
  NamedTensors* model_ = nullptr;      // what it trains and aggregates into: the global model, or its edge's
  ServerAlgorithm* server_ = nullptr;  // and its server half
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<Driver> make_sync_driver(DriverSetup setup, JobRunner& runner, DriverListener& listener) {
  return std::make_unique<SyncDriver>(std::move(setup), runner, listener);
}

}  // namespace drift
