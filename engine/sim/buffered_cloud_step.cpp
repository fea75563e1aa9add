#include <algorithm>
#include <map>

#include "engine/sim/buffered_cloud.hpp"
#include "engine/sim/edge_metrics.hpp"
#include "engine/sim/roster.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {

std::string BufferedCloud::since_last_step() const {
  return std::to_string(buffer_.size()) + " model(s) in the buffer of " + std::to_string(scenario_.hierarchy.buffer) +
         ", " + std::to_string(since_late_.size()) + " late, " + std::to_string(since_lost_.size()) +
         " loop(s) lost, " + std::to_string(since_idle_.size()) + " idle";
}

// hierarchy.stall_loops: why the run ends, once that many loops ended without reaching the buffer
// since the last step; "" while fewer have.
std::size_t BufferedCloud::loops_without_step() const {
  return since_late_.size() + since_lost_.size() + since_idle_.size();
}

std::string BufferedCloud::stalled() const {
  const auto limit = scenario_.hierarchy.stall_loops;
  const auto failed = loops_without_step();
  if (limit <= 0 || failed < static_cast<std::uint64_t>(limit)) return "";
  return "the cloud took no step in the last " + std::to_string(failed) + " edge loops (" + since_last_step() +
         "; hierarchy.stall_loops = " + std::to_string(limit) + "): see `drift validate` for how long a loop takes";
}

std::string BufferedCloud::stop_unanswered(bool stop_asked) {
  if (!stop_asked) return "";
  const auto failed = loops_without_step();
  if (!loops_when_stop_asked_) loops_when_stop_asked_ = failed;
  if (failed < *loops_when_stop_asked_ + 2 * edges_.size()) return "";
  return "asked to stop at the cloud's next step, and none came in the " + std::to_string(failed) +
         " edge loops since the last (" + since_last_step() + "); stopped without a checkpoint";
}

bool BufferedCloud::advance(const NamedTensors& global, Roster& roster) {
  settle(roster);
  const auto& h = scenario_.hierarchy;
  // At one instant: slots freed (under a concurrency cap), then pulls, then arrivals; then by edge.
  enum class Kind : std::uint8_t { free, pull, arrival };
  for (;;) {
    double at = kNever;
    Kind kind = Kind::arrival;
    std::uint32_t which = 0;
    const auto consider = [&](double t, Kind k, std::uint32_t e) {
      if (t < at || (t == at && k < kind)) at = t, kind = k, which = e;
    };
    for (std::uint32_t e = 0; e < edges_.size(); ++e) {
      const auto& loop = loops_[e];
      if (loop.phase == Loop::Phase::running) continue;
      if (loop.phase == Loop::Phase::sending) {
        consider(loop.sent.arrival, Kind::arrival, e);
        continue;
      }
      if (loop.slot_pending) consider(loop.slot_until, Kind::free, e);
      if (!loop.queued) consider(loop.pull_at, Kind::pull, e);
    }
    if (at == kNever) return false;
    // A running edge's model may arrive at its bound itself: after pulls at that instant, but
    // before arrivals from edges later in edge order, so arrivals wait for a strictly later bound.
    const double bound = horizon();
    if (kind == Kind::arrival ? at >= bound : at > bound) return false;
    cloud_now_ = std::max(cloud_now_, at);
    auto& loop = loops_[which];
    if (kind == Kind::free) {
      loop.slot_pending = false;
      wake_queued(at, global);
      continue;
    }
    if (kind == Kind::pull) {
      if (!presence_.online(which, at))
        loop.pull_at = presence_.next_online(which, at);
      else if (concurrency_ > 0 && holding(at) >= concurrency_)
        loop.queued = true;  // every slot is taken: it waits for one, due since pull_at
      else
        begin_loop(which, at, global);
      continue;
    }
    since_bytes_up_ += model_bytes_;
    const bool late = h.deadline > 0 && at > loop.pull_at + h.deadline;  // counted from its pull
    loop.phase = Loop::Phase::waiting;
    loop.pull_at = at;
    auto sent = std::exchange(loop.sent, BufferedEdge{});
    // Its slot frees now, an event of its own: the first waiting pull takes it after a step the
    // arrival completes, with the new model (as the edge's own next pull does).
    loop.slot_until = at;
    loop.slot_pending = concurrency_ > 0;
    if (late) {
      since_late_.push_back(which);
      continue;
    }
    sent.staleness = round_ - 1 - loop.pulled_version;
    buffer_.push_back(std::move(sent));
    if (static_cast<std::int64_t>(buffer_.size()) >= h.buffer) return true;
  }
}

TierNext BufferedCloud::next(const NamedTensors& global, Roster& roster, double time_limit, bool stop_asked) {
  TierNext next;
  for (std::uint64_t tries = 0;; ++tries) {
    if (advance(global, roster)) {
      next.step = true;
      return next;
    }
    if (const auto stall = stalled(); !stall.empty()) {
      next.ended = true;
      next.why = stall;
      return next;
    }
    if (auto why = stop_unanswered(stop_asked); !why.empty()) {
      next.ended = next.stopped = true;
      next.why = std::move(why);
      return next;
    }
    for (std::uint32_t e = 0; e < edges_.size(); ++e)
      if (loops_[e].phase == Loop::Phase::running) add_round(e, loops_[e].begun, next.rounds);
    const auto past_limit = [&](const TierRound& r) { return r.start > time_limit; };
    if (time_limit > 0 && !next.rounds.empty() && std::all_of(next.rounds.begin(), next.rounds.end(), past_limit)) {
      // The edges ran past the time limit before the buffer filled: the run is over, and says
      // why when it never stepped.
      next.rounds.clear();
      next.ended = true;
      if (round_ == 1)
        next.why =
            "the edges reached simulation.max_virtual_time before the cloud's first step (" + since_last_step() + ")";
      return next;
    }
    if (!next.rounds.empty()) return next;
    // Every running edge went offline before its next round: their loops end here (as the next
    // advance would end them), and they pull again when back, which the events must count.
    settle(roster);
    if (next_event() == kNever || tries > 1000000) {
      next.ended = true;
      next.why =
          "no edge can send a model again: each is offline for good, its clients cannot take part, or it goes "
          "offline before every loop's first round";
      return next;
    }
  }
}

// The cloud's step on the full buffer, and the report of everything since the last step:
// loops that ended (the buffer's, lost, idle, late) and bytes either way.
CloudStep BufferedCloud::close_buffered(NamedTensors& global, RoundReport& report) {
  CloudStep step;
  auto& aggregated = step.aggregated;
  auto& shares = step.shares;
  size_edge_fields(report, true);
  std::stable_sort(buffer_.begin(), buffer_.end(),
                   [](const BufferedEdge& a, const BufferedEdge& b) { return a.edge < b.edge; });
  const auto weights = buffer_weights(buffer_);
  global = buffered_step(global, buffer_, scenario_.hierarchy.server_lr);
  std::map<std::uint32_t, double> share_of;
  std::vector<std::uint32_t> reporting;
  for (std::size_t k = 0; k < buffer_.size(); ++k) {
    const auto& b = buffer_[k];
    const auto e = b.edge;
    reporting.push_back(e);
    report.edge_updates[e] += static_cast<std::uint32_t>(b.aggregated.size());
    report.edge_weight[e] += weights[k];
    report.edge_arrival[e] = b.arrival;
    report.edge_rounds_run[e] += b.rounds_run;
    report.edge_busy_seconds[e] = b.busy_seconds;
    report.edge_staleness[e] = static_cast<double>(b.staleness);
    report.edge_cohort_tv[e] = cohort_tv(e, b.aggregated);
    for (const auto& [c, s] : b.shares) share_of[c] += weights[k] * s / static_cast<double>(b.rounds_run);
    aggregated.insert(aggregated.end(), b.aggregated.begin(), b.aggregated.end());
  }
  shares.assign(share_of.begin(), share_of.end());
  std::sort(aggregated.begin(), aggregated.end());
  aggregated.erase(std::unique(aggregated.begin(), aggregated.end()), aggregated.end());
  std::vector<std::pair<std::uint32_t, const EdgeMetrics*>> reported;
  for (const auto& b : buffer_) reported.emplace_back(b.edge, &b.metrics);
  report_edge_metrics(report, edges_.size(), reported, aggregated);
  report.edges_reported = reporting;
  report.edges_lost = std::exchange(since_lost_, {});
  report.edges_idle = std::exchange(since_idle_, {});
  report.edges_late = std::exchange(since_late_, {});
  for (const auto* list : {&report.edges_reported, &report.edges_lost, &report.edges_idle, &report.edges_late})
    report.edges_sampled.insert(report.edges_sampled.end(), list->begin(), list->end());
  std::sort(report.edges_sampled.begin(), report.edges_sampled.end());
  report.edge_bytes_up = std::exchange(since_bytes_up_, 0);
  report.edge_bytes_down = std::exchange(since_bytes_down_, 0);
  report.edge_reported_tv = reported_tv(reporting);
  weights_.push(report.edge_weight);
  report.edge_participation_bias = participation_bias();
  buffer_.clear();
  for (auto& loop : loops_)  // idle loops that took no time try again with the new model
    if (loop.phase == Loop::Phase::waiting && loop.pull_at == kNever) loop.pull_at = cloud_now_;
  step.end = cloud_now_;
  return step;
}

void BufferedCloud::archive_cloud(StateArchive& ar) {
  ar.section("fedbuff cloud");
  ar.value(cloud_now_);
  archive_buffered(ar, buffer_);
  ar.values(since_lost_);
  ar.values(since_idle_);
  ar.values(since_late_);
  ar.value(since_bytes_up_);
  ar.value(since_bytes_down_);
  for (std::uint32_t e = 0; e < edges_.size(); ++e) {
    auto& edge = edges_[e];
    auto& loop = loops_[e];
    ar.value(loop.phase);
    ar.value(loop.pull_at);
    ar.value(edge.clock);
    ar.value(edge.began);
    ar.value(edge.rounds_run);
    ar.value(loop.begun);
    ar.value(loop.pulled_version);
    ar.value(edge.lost);
    ar.value(edge.moved);
    ar.value(edge.stopped);
    ar.values(edge.aggregated);
    archive_shares(ar, edge.shares);
    edge.metrics.archive(ar);
    host_->archive_model(e, ar);
    archive_named(ar, loop.pulled);
    std::vector<BufferedEdge> sent;
    if (loop.phase == Loop::Phase::sending) sent.push_back(std::move(loop.sent));
    archive_buffered(ar, sent);
    if (!sent.empty()) loop.sent = std::move(sent.front());
    if (concurrency_ == 0) continue;  // (checkpoints without a cap are as they were)
    ar.value(loop.queued);
    ar.value(loop.slot_until);
    ar.value(loop.slot_pending);
  }
  archive_records(ar, carried_);
}

std::unique_ptr<RoundTier> make_buffered_cloud(const Scenario& scenario, const Population& population,
                                               const EdgeMembership& membership, std::unique_ptr<EdgeHost> host,
                                               std::unique_ptr<ServerAlgorithm> cloud_half) {
  return std::make_unique<BufferedCloud>(scenario, population, membership, std::move(host), std::move(cloud_half));
}

}  // namespace drift
