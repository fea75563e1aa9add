// The edge tier under hierarchy.cloud = "fedbuff"
// (docs/hierarchy.md#asynchronous-edges-the-buffered-cloud). Each edge loops on its own clock: it
// pulls the global model, runs hierarchy.edge_rounds rounds of its clients, and sends its model;
// the cloud steps every hierarchy.buffer models. The driver runs the
// running edges' next rounds side by side (a wave) and, between waves, this file applies the
// cloud's events in time order as far as it is safe: no running edge can send a model before
// its clock plus its uplink, so an event before every running edge's bound cannot be overtaken.
// What is applied when is then a function of virtual time only, and so are the bits.
#include <algorithm>
#include <cmath>
#include <map>

#include "engine/population/topology.hpp"
#include "engine/sim/edge_tier.hpp"
#include "engine/sim/roster.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {

void EdgeTier::begin_loop(std::uint32_t e, double t, const NamedTensors& global) {
  auto& edge = edges_[e];
  edge.phase = Edge::Phase::running;
  edge.pull_at = t;
  ++edge.loops;
  edge.rounds_run = 0;
  edge.lost = edge.moved = edge.stopped = false;
  edge.aggregated.clear();
  edge.shares.clear();
  edge.metrics.clear();
  host_->pull(e, global);
  edge.pulled = clone(global);
  edge.pulled_version = round_ - 1;  // the cloud steps taken so far
  edge.clock = edge.began = t + link_seconds(e, false);
  since_bytes_down_ += model_bytes_;
}

// A loop is over: its model goes up (or is late), or the edge lost it, or it had nothing to send.
// Then it waits to pull again: once back online, once a client of its is free (an idle loop),
// or, when an idle loop took no time at all, after the next cloud step (kNever).
void EdgeTier::end_loop(std::uint32_t e, Roster& roster) {
  const auto& h = scenario_.hierarchy;
  auto& edge = edges_[e];
  const auto wait = [&](double pull) {
    edge.phase = Edge::Phase::waiting;
    edge.pull_at = pull;
    host_->drop_model(e);
    edge.pulled.clear();
    edge.slot_until = edge.clock;  // (a capped cloud frees the loop's slot when it ends)
    edge.slot_pending = concurrency_ > 0;
  };
  if (edge.lost) {
    since_lost_.push_back(e);
    return wait(presence_.next_online(e, edge.clock));
  }
  if (!edge.moved) {
    since_idle_.push_back(e);
    const double free = roster.next_available(edge.clock, membership_.members(e));
    return wait(free > edge.began ? free : kNever);
  }
  const double up = link_seconds(e, true);
  const double arrival = h.keep_work ? presence_.upload_arrival(e, edge.clock, up) : edge.clock + up;
  const double lost_at =
      h.keep_work ? (arrival < kNever ? kNever : edge.clock) : presence_.next_offline(e, edge.pull_at);
  if (lost_at < arrival) {
    since_lost_.push_back(e);
    return wait(presence_.next_online(e, lost_at));
  }
  edge.phase = Edge::Phase::sending;
  BufferedEdge sent;
  sent.edge = e;
  sent.samples = edge.samples;
  sent.model_request = ++model_requests_;
  sent.pulled = std::move(edge.pulled);
  sent.arrival = arrival;
  sent.rounds_run = edge.rounds_run;
  sent.busy_seconds = edge.clock - edge.began;
  sent.aggregated = std::move(edge.aggregated);
  sent.shares = std::move(edge.shares);
  sent.metrics = std::exchange(edge.metrics, {});
  edge.sent = std::move(sent);
  ask_model(e, edge.sent.model_request);
}

// The host hands over the model edge e's loop sends; it may come after the model has arrived in
// virtual time (and been found late: then it is dropped), but before the cloud steps with it.
void EdgeTier::ask_model(std::uint32_t e, std::uint64_t request) {
  ++models_pending_;
  host_->models({e}, [this, e, request](std::vector<NamedTensors> models) {
    auto& edge = edges_[e];
    BufferedEdge* waiting =
        edge.phase == Edge::Phase::sending && edge.sent.model_request == request ? &edge.sent : nullptr;
    for (auto& b : buffer_)
      if (b.edge == e && b.model_request == request) waiting = &b;
    if (waiting) {
      waiting->model = std::move(models.front());
      waiting->model_request = 0;
    }
    if (--models_pending_ == 0 && when_models_here_) std::exchange(when_models_here_, {})();
  });
}

void EdgeTier::after_models(std::function<void()> next) {
  if (models_pending_ == 0) return next();
  when_models_here_ = std::move(next);
}

void EdgeTier::after_host(std::function<void()> next) {
  if (!hierarchical()) return next();
  host_->settle([this, next] { after_models(next); });
}

void EdgeTier::settle(Roster& roster) {
  const auto per_loop = static_cast<std::uint32_t>(scenario_.hierarchy.edge_rounds);
  for (std::uint32_t e = 0; e < edges_.size(); ++e) {
    const auto& edge = edges_[e];
    if (edge.phase == Edge::Phase::running && (edge.lost || edge.stopped || edge.rounds_run >= per_loop))
      end_loop(e, roster);
  }
}

// No running edge's model can reach the cloud before this. Under a concurrency cap, no running
// edge can free its slot before its clock (a loop lost or idle ends there), and every event may
// hand a free slot to a waiting edge: the bound is then the clocks themselves.
double EdgeTier::horizon() const {
  double bound = kNever;
  for (std::uint32_t e = 0; e < edges_.size(); ++e) {
    const auto& edge = edges_[e];
    if (edge.phase != Edge::Phase::running) continue;
    bound = std::min(bound, edge.clock + (concurrency_ > 0 ? 0.0 : link_seconds(e, true)));
  }
  return bound;
}

// hierarchy.concurrency: the edges holding a slot at t (running, sending, or a lost or idle loop
// that ends after t).
std::uint32_t EdgeTier::holding(double t) const {
  std::uint32_t n = 0;
  for (const auto& edge : edges_)
    n += edge.phase != Edge::Phase::waiting || (edge.slot_pending && edge.slot_until > t) ? 1 : 0;
  return n;
}

// Slots free at t go to the waiting pulls, first due first (ties by edge), each at t or its due
// time, whichever is later; one that finds its edge offline pulls again when it is back.
void EdgeTier::wake_queued(double t, const NamedTensors& global) {
  while (holding(t) < concurrency_) {
    std::uint32_t first = 0;
    double due = kNever;
    for (std::uint32_t e = 0; e < edges_.size(); ++e)
      if (edges_[e].queued && edges_[e].pull_at < due) due = edges_[e].pull_at, first = e;
    if (due == kNever) return;
    auto& edge = edges_[first];
    edge.queued = false;
    const double at = std::max(t, due);
    if (!presence_.online(first, at)) {
      edge.pull_at = presence_.next_online(first, at);
      continue;
    }
    begin_loop(first, at, global);
  }
}

double EdgeTier::next_event() const {
  double next = kNever;
  for (const auto& edge : edges_) {
    if (edge.phase == Edge::Phase::waiting && !edge.queued) next = std::min(next, edge.pull_at);
    if (edge.phase == Edge::Phase::waiting && edge.slot_pending) next = std::min(next, edge.slot_until);
    if (edge.phase == Edge::Phase::sending) next = std::min(next, edge.sent.arrival);
  }
  return next;
}

std::string EdgeTier::since_last_step() const {
  return std::to_string(buffer_.size()) + " model(s) in the buffer of " + std::to_string(scenario_.hierarchy.buffer) +
         ", " + std::to_string(since_late_.size()) + " late, " + std::to_string(since_lost_.size()) +
         " loop(s) lost, " + std::to_string(since_idle_.size()) + " idle";
}

// hierarchy.stall_loops: why the run ends, once that many loops ended without reaching the buffer
// since the last step; "" while fewer have.
std::size_t EdgeTier::loops_without_step() const {
  return since_late_.size() + since_lost_.size() + since_idle_.size();
}

std::string EdgeTier::stalled() const {
  const auto limit = scenario_.hierarchy.stall_loops;
  const auto failed = loops_without_step();
  if (limit <= 0 || failed < static_cast<std::uint64_t>(limit)) return "";
  return "the cloud took no step in the last " + std::to_string(failed) + " edge loops (" + since_last_step() +
         "; hierarchy.stall_loops = " + std::to_string(limit) + "): see `drift validate` for how long a loop takes";
}

std::string EdgeTier::stop_unanswered(bool stop_asked) {
  if (!stop_asked) return "";
  const auto failed = loops_without_step();
  if (!loops_when_stop_asked_) loops_when_stop_asked_ = failed;
  if (failed < *loops_when_stop_asked_ + 2 * edges_.size()) return "";
  return "asked to stop at the cloud's next step, and none came in the " + std::to_string(failed) +
         " edge loops since the last (" + since_last_step() + "); stopped without a checkpoint";
}

bool EdgeTier::advance(const NamedTensors& global, Roster& roster) {
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
      const auto& edge = edges_[e];
      if (edge.phase == Edge::Phase::running) continue;
      if (edge.phase == Edge::Phase::sending) {
        consider(edge.sent.arrival, Kind::arrival, e);
        continue;
      }
      if (edge.slot_pending) consider(edge.slot_until, Kind::free, e);
      if (!edge.queued) consider(edge.pull_at, Kind::pull, e);
    }
    if (at == kNever) return false;
    // A running edge's model may arrive at its bound itself: after pulls at that instant, but
    // before arrivals from edges later in edge order, so arrivals wait for a strictly later bound.
    const double bound = horizon();
    if (kind == Kind::arrival ? at >= bound : at > bound) return false;
    cloud_now_ = std::max(cloud_now_, at);
    auto& edge = edges_[which];
    if (kind == Kind::free) {
      edge.slot_pending = false;
      wake_queued(at, global);
      continue;
    }
    if (kind == Kind::pull) {
      if (!presence_.online(which, at))
        edge.pull_at = presence_.next_online(which, at);
      else if (concurrency_ > 0 && holding(at) >= concurrency_)
        edge.queued = true;  // every slot is taken: it waits for one, due since pull_at
      else
        begin_loop(which, at, global);
      continue;
    }
    since_bytes_up_ += model_bytes_;
    const bool late = h.deadline > 0 && at > edge.pull_at + h.deadline;  // counted from its pull
    edge.phase = Edge::Phase::waiting;
    edge.pull_at = at;
    auto sent = std::exchange(edge.sent, BufferedEdge{});
    // Its slot frees now, an event of its own: the first waiting pull takes it after a step the
    // arrival completes, with the new model (as the edge's own next pull does).
    edge.slot_until = at;
    edge.slot_pending = concurrency_ > 0;
    if (late) {
      since_late_.push_back(which);
      continue;
    }
    sent.staleness = round_ - 1 - edge.pulled_version;
    buffer_.push_back(std::move(sent));
    if (static_cast<std::int64_t>(buffer_.size()) >= h.buffer) return true;
  }
}

EdgeTier::LoopWave EdgeTier::next_loop_wave(const NamedTensors& global, Roster& roster, double time_limit,
                                            bool stop_asked) {
  LoopWave next;
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
    next.rounds = next_wave();
    const auto past_limit = [&](const EdgeRound& r) { return r.start > time_limit; };
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
CloudStep EdgeTier::close_buffered(NamedTensors& global, RoundReport& report) {
  CloudStep step;
  auto& aggregated = step.aggregated;
  auto& shares = step.shares;
  size_edge_fields(report);
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
  for (auto& edge : edges_)  // idle loops that took no time try again with the new model
    if (edge.phase == Edge::Phase::waiting && edge.pull_at == kNever) edge.pull_at = cloud_now_;
  step.end = cloud_now_;
  return step;
}

void EdgeTier::archive_buffered_state(StateArchive& ar) {
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
    ar.value(edge.phase);
    ar.value(edge.pull_at);
    ar.value(edge.clock);
    ar.value(edge.began);
    ar.value(edge.rounds_run);
    ar.value(edge.loops);
    ar.value(edge.pulled_version);
    ar.value(edge.lost);
    ar.value(edge.moved);
    ar.value(edge.stopped);
    ar.values(edge.aggregated);
    archive_shares(ar, edge.shares);
    edge.metrics.archive(ar);
    host_->archive_model(e, ar);
    archive_named(ar, edge.pulled);
    std::vector<BufferedEdge> sent;
    if (edge.phase == Edge::Phase::sending) sent.push_back(std::move(edge.sent));
    archive_buffered(ar, sent);
    if (!sent.empty()) edge.sent = std::move(sent.front());
    if (concurrency_ == 0) continue;  // (checkpoints without a cap are as they were)
    ar.value(edge.queued);
    ar.value(edge.slot_until);
    ar.value(edge.slot_pending);
  }
}

}  // namespace drift
