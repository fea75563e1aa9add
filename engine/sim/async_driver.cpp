// The asynchronous drivers, FedAsync (Xie et al.) and FedBuff (Nguyen et al.): docs/algorithms.md#fedasync and #fedbuff.
// Up to `concurrency` clients train at once, each from the model version current when it
// was dispatched. Events are applied in (virtual time, client id) order by a conservative
// rule: an event is applied only when no running job can still finish before it (a job's
// earliest finish is known at dispatch; its exact finish when its upload size is known).
// So real training runs in parallel, yet the result never depends on wall-clock order.
#include <cmath>
#include <map>

#include "engine/sim/simulation_core.hpp"
#include "engine/sim/staleness.hpp"
#include "engine/sim/sync_driver.hpp"

namespace drift {
namespace {

// When nobody is eligible and nothing runs, look again this much later (virtual seconds).
constexpr double kIdleRetry = 60.0;
constexpr int kMaxIdleRetries = 100000;

struct InFlight {
  TaskPlan plan;
  bool launched = false;
  bool answered = false;
  JobOutcome outcome;
  std::shared_ptr<const NamedTensors> pulled;  // FedBuff: the model the client started from
};

class AsyncDriver final : public Driver, private SimulationCore {
 public:
  AsyncDriver(DriverSetup setup, JobRunner& runner, DriverListener& listener)
      : SimulationCore(setup, runner, listener),
        buffered_mode_(scenario_.simulation.mode == SimulationMode::fedbuff),
        global_(std::make_shared<NamedTensors>(std::move(setup.initial_weights))),
        staleness_{scenario_.async.staleness, scenario_.async.staleness_a, scenario_.async.staleness_b} {}

  void start() override {
    open_report();
    apply_timeline(1, now_);
    fill();
    advance();
  }

  bool finished() const override { return finished_; }

  void on_outcome(std::uint64_t job, JobOutcome outcome) override {
    if (finished_) return;
    auto it = inflight_.find(job);
    if (it == inflight_.end() || it->second.answered) return;
    it->second.answered = true;
    it->second.outcome = std::move(outcome);
    advance();
  }

 private:
  // The time at which a job's outcome takes effect, once it is known.
  double event_time(const InFlight& f) {
    const auto& p = f.plan;
    if (!f.launched) return std::min(p.drop_time, offline_between(p.client, p.start, p.earliest_finish));
    if (!f.outcome.ok) return p.earliest_finish;
    const double finish = p.finish(f.outcome.upload_bytes);
    return std::min({finish, p.drop_time, offline_between(p.client, p.start, finish)});
  }

  void advance() {
    while (!finished_) {
      // The earliest event whose time is known.
      std::uint64_t best_job = 0;
      double best_time = kNever;
      std::uint32_t best_client = 0;
      bool found = false;
      for (auto& [id, f] : inflight_) {
        if (f.launched && !f.answered) continue;
        const double t = event_time(f);
        if (!found || t < best_time || (t == best_time && f.plan.client < best_client)) {
          found = true;
          best_job = id;
          best_time = t;
          best_client = f.plan.client;
        }
      }
      // The earliest moment a running job could still take effect.
      double bound = kNever;
      std::uint32_t bound_client = 0;
      for (auto& [id, f] : inflight_) {
        if (!f.launched || f.answered) continue;
        const double t = std::min(f.plan.earliest_finish, f.plan.drop_time);
        if (t < bound || (t == bound && f.plan.client < bound_client)) {
          bound = t;
          bound_client = f.plan.client;
        }
      }
      // Timeline entries at a fixed time go first when nothing can precede them.
      const double timed = next_timed_entry();
      if (timed < kNever && (!found || timed <= best_time) && timed < bound) {
        now_ = std::max(now_, timed);
        apply_timeline(aggregations_ + 1, now_);
        fill();
        continue;
      }
      if (bound < kNever && (!found || bound < best_time || (bound == best_time && bound_client < best_client))) return;
      if (!found) {
        if (inflight_.empty() && !stop_reached()) {
          // Nobody could be dispatched: let virtual time pass until someone can.
          if (++idle_retries_ > kMaxIdleRetries) return finish();
          now_ += kIdleRetry;
          apply_timeline(aggregations_ + 1, now_);
          fill();
          continue;
        }
        return;
      }
      idle_retries_ = 0;
      auto node = inflight_.extract(best_job);
      now_ = std::max(now_, best_time);
      handle(node.mapped(), best_time);
      if (stop_reached()) return finish();
      apply_timeline(aggregations_ + 1, now_);
      fill();
    }
  }

  void handle(InFlight& f, double t) {
    const auto c = f.plan.client;
    busy_[c] = 0;
    if (f.launched && !f.outcome.ok && f.outcome.lost) {
      // Its device vanished (a worker died): to the federation, the client dropped out.
      ++report_.dropped;
      report_.wasted_compute_seconds += std::max(0.0, std::min(t, f.plan.compute_end) - f.plan.download_end);
      record({c, "dropped", t, 0, 0.0, 0, 0, 0, f.outcome.error});
      return;
    }
    if (f.launched && !f.outcome.ok) {
      ++report_.failed;
      record({c, "failed", t, 0, 0.0, 0, 0, 0, f.outcome.error});
      return;
    }
    if (!f.launched || t < f.plan.finish(f.outcome.upload_bytes)) {
      ++report_.dropped;
      report_.wasted_compute_seconds += std::max(0.0, std::min(t, f.plan.compute_end) - f.plan.download_end);
      if (f.launched) report_.discarded_samples += f.outcome.update.num_samples;
      record({c, "dropped", t, 0, 0.0, 0, 0, 0, t == f.plan.drop_time ? "dropped out" : "went offline"});
      return;
    }
    auto& u = f.outcome.update;
    const std::uint64_t staleness = version_ - f.plan.model_version;
    last_loss_[c] = u.metrics.loss;
    ++report_.finished;
    report_.bytes_up += f.outcome.upload_bytes;
    record({c, "finished", t, u.num_samples, u.metrics.loss, 0, f.outcome.upload_bytes, staleness, ""});
    check_compatible(*global_, u.weights);
    if (buffered_mode_) buffer(f, staleness);
    else mix(u, staleness);
  }

  // FedAsync: x <- (1 - a) x + a x_new with a = alpha * s(staleness).
  void mix(ClientUpdate& u, std::uint64_t staleness) {
    const double a = scenario_.async.alpha * staleness_(staleness);
    torch::NoGradGuard no_grad;
    auto next = std::make_shared<NamedTensors>();
    for (std::size_t i = 0; i < global_->size(); ++i) {
      const auto& g = (*global_)[i].value;
      if (!g.is_floating_point()) {
        next->push_back({(*global_)[i].name, u.weights[i].value.clone()});
        continue;
      }
      auto mixed = g.to(torch::kFloat64) * (1.0 - a) + u.weights[i].value.to(torch::kFloat64) * a;
      next->push_back({(*global_)[i].name, mixed.to(g.scalar_type())});
    }
    pending_.push_back(std::move(u));
    pending_staleness_.push_back(staleness);
    global_ = std::move(next);
    aggregated();
  }

  // FedBuff: buffer (x_local - x_pulled) / sqrt(1 + staleness); after K, x <- x + eta * mean.
  void buffer(InFlight& f, std::uint64_t staleness) {
    auto& u = f.outcome.update;
    torch::NoGradGuard no_grad;
    if (delta_sum_.empty())
      for (const auto& t : *global_) delta_sum_.push_back(torch::zeros(t.value.sizes(), torch::kFloat64));
    const double weight = 1.0 / std::sqrt(1.0 + static_cast<double>(staleness));
    for (std::size_t i = 0; i < global_->size(); ++i) {
      if (!(*global_)[i].value.is_floating_point()) continue;
      delta_sum_[i].add_(u.weights[i].value.to(torch::kFloat64) - (*f.pulled)[i].value.to(torch::kFloat64), weight);
    }
    pending_.push_back(std::move(u));
    pending_staleness_.push_back(staleness);
    if (static_cast<std::int64_t>(pending_.size()) < scenario_.async.buffer_size) return;
    const double scale = scenario_.async.server_lr / static_cast<double>(pending_.size());
    auto next = std::make_shared<NamedTensors>();
    for (std::size_t i = 0; i < global_->size(); ++i) {
      const auto& g = (*global_)[i].value;
      if (!g.is_floating_point()) {
        next->push_back({(*global_)[i].name, pending_.back().weights[i].value.clone()});
        continue;
      }
      next->push_back({(*global_)[i].name, (g.to(torch::kFloat64) + delta_sum_[i] * scale).to(g.scalar_type())});
    }
    delta_sum_.clear();
    global_ = std::move(next);
    aggregated();
  }

  void aggregated() {
    ++version_;
    ++aggregations_;
    std::vector<std::uint32_t> clients;
    for (const auto& u : pending_) clients.push_back(u.client_id);
    add_training_metrics(report_, pending_);
    std::sort(clients.begin(), clients.end());
    report_.staleness = pending_staleness_;
    std::sort(report_.staleness.begin(), report_.staleness.end());
    report_.num_updates = static_cast<std::uint32_t>(pending_.size());
    pending_.clear();
    pending_staleness_.clear();
    account(report_, clients);
    emit(false);
  }

  void emit(bool last) {
    report_.round = aggregations_;
    report_.model_version = version_;
    report_.time_end = now_;
    report_.total_rounds = last ? aggregations_ : scenario_.rounds;
    const auto every = static_cast<std::uint32_t>(scenario_.evaluation.every);
    const bool evaluate = last || aggregations_ % every == 0 || stop_reached();
    listener_.on_aggregation(std::move(report_), evaluate ? global_.get() : nullptr);
    open_report();
  }

  void open_report() {
    report_ = RoundReport{};
    report_.time_start = now_;
  }

  bool stop_reached() const {
    return aggregations_ >= scenario_.rounds ||
           (scenario_.simulation.max_virtual_time > 0 && now_ >= scenario_.simulation.max_virtual_time);
  }

  void finish() {
    if (finished_) return;
    finished_ = true;
    listener_.on_finished();
  }

  void fill() {
    while (!stop_reached() && static_cast<std::int64_t>(inflight_.size()) < scenario_.async.concurrency) {
      const auto chosen = select(aggregations_ + 1, now_, 1);
      if (chosen.empty()) return;
      dispatch(chosen.front());
    }
  }

  void dispatch(std::uint32_t c) {
    if (!task_ || task_->model_version != version_) {
      auto task = std::make_shared<TrainingTask>();
      task->round = aggregations_ + 1;
      task->model_version = version_;
      task->weights = *global_;
      task->hyper = hyper_for(task->round);
      task_ = std::move(task);
      task_bytes_ = runner_.task_bytes(task_);
    }
    InFlight f;
    f.plan = plan(c, now_, task_bytes_, version_);
    f.pulled = global_;
    busy_[c] = 1;
    report_.cohort.push_back(c);
    report_.bytes_down += task_bytes_;
    record({c, "selected", now_, 0, 0.0, task_bytes_, 0, 0, ""});
    const double offline = offline_between(c, now_, f.plan.earliest_finish);
    f.launched = offline >= f.plan.earliest_finish && f.plan.drop_time >= f.plan.earliest_finish;
    const auto job = f.plan.job;
    inflight_.emplace(job, std::move(f));
    if (inflight_.at(job).launched) runner_.launch(job, c, task_);
  }

  void record(ClientRecord r) { report_.clients.push_back(std::move(r)); }

  bool buffered_mode_;
  std::shared_ptr<const NamedTensors> global_;
  StalenessFunction staleness_;
  std::uint64_t version_ = 0;
  std::uint32_t aggregations_ = 0;
  std::map<std::uint64_t, InFlight> inflight_;
  std::shared_ptr<const TrainingTask> task_;
  std::uint64_t task_bytes_ = 0;
  std::vector<ClientUpdate> pending_;
  std::vector<std::uint64_t> pending_staleness_;
  std::vector<torch::Tensor> delta_sum_;
  RoundReport report_;
  int idle_retries_ = 0;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<Driver> make_async_driver(DriverSetup setup, JobRunner& runner, DriverListener& listener) {
  return std::make_unique<AsyncDriver>(std::move(setup), runner, listener);
}

std::unique_ptr<Driver> make_driver(DriverSetup setup, JobRunner& runner, DriverListener& listener) {
  if (setup.scenario->simulation.mode == SimulationMode::sync) return make_sync_driver(std::move(setup), runner, listener);
  return make_async_driver(std::move(setup), runner, listener);
}

}  // namespace drift
