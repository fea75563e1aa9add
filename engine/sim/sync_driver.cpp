// The synchronous driver. A round at virtual time t0: apply the timeline, select
// ceil(over_selection x cohort) clients, plan every task, train the ones that can still
// matter, and when all have answered, replay the round in virtual-time order: the first
// `cohort` updates that arrive before the deadline are aggregated, the rest are late
// (discarded, or kept as stale for the next aggregation); clients that go offline or drop out
// before their upload completes are dropped. The round ends when the last needed update
// arrives, at the deadline, or with its last event.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "engine/sim/simulation_core.hpp"
#include "engine/sim/sync_driver.hpp"
#include "engine/metrics/evaluation.hpp"

namespace drift {
namespace {

struct Pending {
  TaskPlan plan;
  bool launched = false;
  bool answered = false;
  JobOutcome outcome;
};

struct StaleUpdate {
  double arrival;
  ClientUpdate update;
  std::uint64_t bytes;
};

class SyncDriver final : public Driver, private SimulationCore {
 public:
  SyncDriver(DriverSetup setup, JobRunner& runner, DriverListener& listener)
      : SimulationCore(setup, runner, listener),
        algorithm_(std::move(setup.algorithm)),
        global_(std::move(setup.initial_weights)),
        private_models_(setup.private_models) {
    if (private_models_) personal_.resize(population_->size());
  }

  void start() override { begin_round(); }
  bool finished() const override { return finished_; }

  void on_outcome(std::uint64_t job, JobOutcome outcome) override {
    auto it = jobs_.find(job);
    if (it == jobs_.end() || it->second.answered) return;
    it->second.answered = true;
    it->second.outcome = std::move(outcome);
    if (--outstanding_ == 0) close_round();
  }

 private:
  void begin_round() {
    apply_timeline(round_, now_);
    report_ = RoundReport{};
    report_.round = round_;
    report_.total_rounds = scenario_.rounds;
    report_.time_start = now_;
    record_eligible(report_, now_);
    jobs_.clear();

    const auto cohort = cohort_size(now_);
    const auto wanted = static_cast<std::uint32_t>(std::ceil(scenario_.simulation.over_selection * cohort - 1e-9));
    report_.cohort = select(round_, now_, wanted);
    needed_ = std::min<std::uint32_t>(cohort, static_cast<std::uint32_t>(report_.cohort.size()));

    auto task = std::make_shared<TrainingTask>();
    task->round = round_;
    task->model_version = version_;
    task->weights = global_;
    task->payload = algorithm_->broadcast(round_);
    task->hyper = hyper_for(task->round);
    const std::uint64_t down = report_.cohort.empty() ? 0 : runner_.task_bytes(task);

    const double deadline_at = deadline_ > 0 ? now_ + deadline_ : kNever;
    for (auto c : report_.cohort) {
      Pending p;
      p.plan = plan(c, now_, down, version_);
      record({c, "selected", now_, 0, 0.0, down, 0, 0, ""});
      report_.bytes_down += down;
      const double offline = offline_between(c, now_, p.plan.earliest_finish);
      // Work that can never be used is not trained, unless asked to measure it.
      if (offline < p.plan.earliest_finish || p.plan.drop_time < p.plan.earliest_finish) {
        const double at = std::min(offline, p.plan.drop_time);
        drop(c, at, p.plan, offline <= now_ ? "offline when selected" : offline < p.plan.drop_time ? "went offline" : "dropped out");
        continue;
      }
      const bool certainly_late = p.plan.earliest_finish > deadline_at;
      if (certainly_late && scenario_.simulation.late_updates == LateUpdates::discard && !scenario_.simulation.train_doomed) {
        ++report_.late;
        report_.wasted_compute_seconds += p.plan.compute_end - p.plan.download_end;
        record({c, "late", p.plan.earliest_finish, population_->num_samples[c], 0.0, 0, 0, 0, "certain to miss the deadline: not trained"});
        busy_until_[c] = p.plan.earliest_finish;
        continue;
      }
      p.launched = true;
      busy_[c] = 1;
      jobs_.emplace(p.plan.job, p);
    }
    outstanding_ = jobs_.size();
    for (auto& [id, p] : jobs_) runner_.launch(id, p.plan.client, task);
    if (outstanding_ == 0) close_round();
  }

  void close_round() {
    const double deadline_at = deadline_ > 0 ? report_.time_start + deadline_ : kNever;
    struct Arrival {
      double time;
      std::uint32_t client;
      Pending* job;
    };
    std::vector<Arrival> arrivals;
    double last_event = report_.time_start;
    for (auto& [id, p] : jobs_) {
      const auto c = p.plan.client;
      busy_[c] = 0;
      // The client's model changed when it trained, whether or not the server uses its upload.
      if (private_models_ && p.outcome.ok && p.outcome.update.personal) personal_[c] = *p.outcome.update.personal;
      if (!p.outcome.ok && p.outcome.lost) {
        // Its device vanished (a worker died): to the federation, the client dropped out.
        drop(c, p.plan.earliest_finish, p.plan, p.outcome.error);
        last_event = std::max(last_event, p.plan.earliest_finish);
        continue;
      }
      if (!p.outcome.ok) {
        ++report_.failed;
        record({c, "failed", p.plan.earliest_finish, 0, 0.0, 0, 0, 0, p.outcome.error});
        last_event = std::max(last_event, p.plan.earliest_finish);
        continue;
      }
      const double finish = p.plan.finish(p.outcome.upload_bytes);
      const double offline = offline_between(c, p.plan.start, finish);
      if (offline < finish || p.plan.drop_time < finish) {
        const double at = std::min(offline, p.plan.drop_time);
        drop(c, at, p.plan, offline < p.plan.drop_time ? "went offline" : "dropped out");
        report_.discarded_samples += p.outcome.update.num_samples;
        last_event = std::max(last_event, at);
        continue;
      }
      last_local_loss(c, p.outcome.update.metrics.loss);
      arrivals.push_back({finish, c, &p});
    }
    std::sort(arrivals.begin(), arrivals.end(),
              [](const Arrival& a, const Arrival& b) { return a.time != b.time ? a.time < b.time : a.client < b.client; });

    std::vector<ClientUpdate> accepted;
    double end = report_.time_start;
    std::vector<StaleUpdate> newly_late;
    for (auto& a : arrivals) {
      auto& o = a.job->outcome;
      if (accepted.size() < needed_ && a.time <= deadline_at) {
        record({a.client, "finished", a.time, o.update.num_samples, o.update.metrics.loss, 0, o.upload_bytes, 0, ""});
        report_.bytes_up += o.upload_bytes;
        ++report_.finished;
        end = std::max(end, a.time);
        accepted.push_back(std::move(o.update));
        continue;
      }
      ++report_.late;
      report_.bytes_up += o.upload_bytes;
      busy_until_[a.client] = a.time;
      last_event = std::max(last_event, a.time);
      if (scenario_.simulation.late_updates == LateUpdates::stale) {
        record({a.client, "late", a.time, o.update.num_samples, o.update.metrics.loss, 0, o.upload_bytes, 0, "kept as stale"});
        newly_late.push_back({a.time, std::move(o.update), o.upload_bytes});
      } else {
        record({a.client, "late", a.time, o.update.num_samples, o.update.metrics.loss, 0, o.upload_bytes, 0, "discarded"});
        report_.discarded_samples += o.update.num_samples;
        report_.wasted_compute_seconds += a.job->plan.compute_end - a.job->plan.download_end;
      }
    }
    if (accepted.size() < needed_) end = deadline_at < kNever ? deadline_at : std::max(end, last_event);

    // Stale updates from earlier rounds that have arrived by now join this aggregation.
    std::vector<StaleUpdate> keep;
    for (auto& s : stale_) {
      if (s.arrival <= end) {
        const auto staleness = version_ - s.update.model_version;
        record({s.update.client_id, "stale", s.arrival, s.update.num_samples, s.update.metrics.loss, 0, s.bytes, staleness, ""});
        accepted.push_back(std::move(s.update));
      } else {
        keep.push_back(std::move(s));
      }
    }
    stale_ = std::move(keep);
    for (auto& s : newly_late) stale_.push_back(std::move(s));

    std::sort(accepted.begin(), accepted.end(),
              [](const ClientUpdate& a, const ClientUpdate& b) { return a.client_id < b.client_id; });
    std::vector<std::uint32_t> aggregated;
    for (const auto& u : accepted) {
      aggregated.push_back(u.client_id);
      report_.staleness.push_back(version_ - u.model_version);
    }
    std::sort(report_.staleness.begin(), report_.staleness.end());
    const bool aggregate = !accepted.empty() && static_cast<std::int64_t>(accepted.size()) >= scenario_.simulation.min_cohort;
    if (aggregate) {
      add_training_metrics(report_, accepted);
      algorithm_->aggregate(global_, accepted, round_);
      ++version_;
    } else {
      aggregated.clear();
      report_.staleness.clear();
      for (const auto& u : accepted) report_.discarded_samples += u.num_samples;
    }
    report_.num_updates = static_cast<std::uint32_t>(aggregated.size());
    report_.model_version = version_;
    report_.time_end = end;
    account(report_, aggregated);
    std::stable_sort(report_.clients.begin(), report_.clients.end(), [](const ClientRecord& a, const ClientRecord& b) {
      return a.time != b.time ? a.time < b.time : a.client_id < b.client_id;
    });

    now_ = end;
    const bool last = round_ >= scenario_.rounds ||
                      (scenario_.simulation.max_virtual_time > 0 && now_ >= scenario_.simulation.max_virtual_time);
    const auto every = static_cast<std::uint32_t>(scenario_.evaluation.every);
    const bool evaluate = round_ % every == 0 || last;
    if (last) report_.total_rounds = round_;
    if (private_models_) {
      if (evaluate) add_personal_evaluation(report_);
      listener_.on_aggregation(std::move(report_), nullptr);
    } else {
      listener_.on_aggregation(std::move(report_), evaluate ? &global_ : nullptr);
    }
    if (last) {
      finished_ = true;
      listener_.on_finished();
      return;
    }
    ++round_;
    begin_round();
  }

  // Private models: every client's accuracy as of the last model it trained, and the
  // sample-weighted accuracy over the clients evaluated so far (PFLlib's figure once every
  // client has trained).
  void add_personal_evaluation(RoundReport& r) const {
    std::vector<EvalResult> parts;
    r.client_accuracy.assign(personal_.size(), std::nan(""));
    for (std::size_t c = 0; c < personal_.size(); ++c) {
      if (!personal_[c]) continue;
      const auto& e = *personal_[c];
      parts.push_back(e);
      std::uint64_t hits = 0, n = 0;
      for (std::size_t k = 0; k < e.count.size(); ++k) {
        hits += e.correct[k];
        n += e.count[k];
      }
      r.client_accuracy[c] = n ? static_cast<double>(hits) / static_cast<double>(n) : std::nan("");
    }
    r.clients_evaluated = static_cast<std::uint32_t>(parts.size());
    r.evaluated = true;
    const auto classes = parts.empty() ? std::int64_t{0} : static_cast<std::int64_t>(parts.front().count.size());
    const auto summary = combine_evaluations(parts, classes);
    r.test_accuracy = summary.accuracy;
    r.test_loss = summary.loss;
    r.per_class_accuracy = summary.per_class_accuracy;
  }

  void drop(std::uint32_t c, double at, const TaskPlan& plan, const std::string& why) {
    ++report_.dropped;
    report_.wasted_compute_seconds += std::max(0.0, std::min(at, plan.compute_end) - plan.download_end);
    record({c, "dropped", at, 0, 0.0, 0, 0, 0, why});
  }

  void last_local_loss(std::uint32_t c, double loss) { last_loss_[c] = loss; }

  // Fields: client, event, time, samples, train loss, bytes down, bytes up, staleness, detail.
  void record(ClientRecord r) { report_.clients.push_back(std::move(r)); }

  std::unique_ptr<ServerAlgorithm> algorithm_;
  NamedTensors global_;
  bool private_models_ = false;
  std::vector<std::optional<EvalResult>> personal_;  // private models: by client id
  std::uint64_t version_ = 0;
  std::uint32_t round_ = 1;
  std::uint32_t needed_ = 0;
  RoundReport report_;
  std::map<std::uint64_t, Pending> jobs_;  // by job id
  std::size_t outstanding_ = 0;
  std::vector<StaleUpdate> stale_;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<Driver> make_sync_driver(DriverSetup setup, JobRunner& runner, DriverListener& listener) {
  return std::make_unique<SyncDriver>(std::move(setup), runner, listener);
}

}  // namespace drift
