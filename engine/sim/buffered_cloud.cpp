#include <algorithm>

#include "engine/population/topology.hpp"
#include "engine/sim/buffered_cloud.hpp"
#include "engine/sim/roster.hpp"

namespace drift {

void BufferedCloud::begin_loop(std::uint32_t e, double t, const NamedTensors& global) {
  auto& edge = edges_[e];
  auto& loop = loops_[e];
  loop.phase = Loop::Phase::running;
  loop.pull_at = t;
  ++loop.begun;
  edge.rounds_run = 0;
  edge.lost = edge.moved = edge.stopped = false;
  edge.aggregated.clear();
  edge.shares.clear();
  edge.metrics.clear();
  host_->pull(e, global);
  loop.pulled = clone(global);
  loop.pulled_version = round_ - 1;  // the cloud steps taken so far
  edge.clock = edge.began = t + link_seconds(e, false);
  since_bytes_down_ += model_bytes_;
}

// A loop is over: its model goes up (or is late), or the edge lost it, or it had nothing to send.
// Then it waits to pull again: once back online, once a client of its is free (an idle loop),
// or, when an idle loop took no time at all, after the next cloud step (kNever).
void BufferedCloud::end_loop(std::uint32_t e, Roster& roster) {
  const auto& h = scenario_.hierarchy;
  auto& edge = edges_[e];
  auto& loop = loops_[e];
  const auto wait = [&](double pull) {
    loop.phase = Loop::Phase::waiting;
    loop.pull_at = pull;
    host_->drop_model(e);
    loop.pulled.clear();
    loop.slot_until = edge.clock;  // (a capped cloud frees the loop's slot when it ends)
    loop.slot_pending = concurrency_ > 0;
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
      h.keep_work ? (arrival < kNever ? kNever : edge.clock) : presence_.next_offline(e, loop.pull_at);
  if (lost_at < arrival) {
    since_lost_.push_back(e);
    return wait(presence_.next_online(e, lost_at));
  }
  loop.phase = Loop::Phase::sending;
  BufferedEdge sent;
  sent.edge = e;
  sent.samples = edge.samples;
  sent.model_request = ++model_requests_;
  sent.pulled = std::move(loop.pulled);
  sent.arrival = arrival;
  sent.rounds_run = edge.rounds_run;
  sent.busy_seconds = edge.clock - edge.began;
  sent.aggregated = std::move(edge.aggregated);
  sent.shares = std::move(edge.shares);
  sent.metrics = std::exchange(edge.metrics, {});
  loop.sent = std::move(sent);
  ask_model(e, loop.sent.model_request);
}

// The host hands over the model edge e's loop sends; it may come after the model has arrived in
// virtual time (and been found late: then it is dropped), but before the cloud steps with it.
void BufferedCloud::ask_model(std::uint32_t e, std::uint64_t request) {
  ++models_pending_;
  host_->models({e}, [this, e, request](std::vector<NamedTensors> models) {
    auto& loop = loops_[e];
    BufferedEdge* waiting =
        loop.phase == Loop::Phase::sending && loop.sent.model_request == request ? &loop.sent : nullptr;
    for (auto& b : buffer_)
      if (b.edge == e && b.model_request == request) waiting = &b;
    if (waiting) {
      waiting->model = std::move(models.front());
      waiting->model_request = 0;
    }
    if (--models_pending_ == 0 && when_models_here_) std::exchange(when_models_here_, {})();
  });
}

void BufferedCloud::settle(Roster& roster) {
  const auto per_loop = static_cast<std::uint32_t>(scenario_.hierarchy.edge_rounds);
  for (std::uint32_t e = 0; e < edges_.size(); ++e) {
    const auto& edge = edges_[e];
    const auto& loop = loops_[e];
    if (loop.phase == Loop::Phase::running && (edge.lost || edge.stopped || edge.rounds_run >= per_loop))
      end_loop(e, roster);
  }
}

// No running edge's model can reach the cloud before this. Under a concurrency cap, no running
// edge can free its slot before its clock (a loop lost or idle ends there), and every event may
// hand a free slot to a waiting edge: the bound is then the clocks themselves.
double BufferedCloud::horizon() const {
  double bound = kNever;
  for (std::uint32_t e = 0; e < edges_.size(); ++e) {
    const auto& edge = edges_[e];
    const auto& loop = loops_[e];
    if (loop.phase != Loop::Phase::running) continue;
    bound = std::min(bound, edge.clock + (concurrency_ > 0 ? 0.0 : link_seconds(e, true)));
  }
  return bound;
}

// hierarchy.concurrency: the edges holding a slot at t (running, sending, or a lost or idle loop
// that ends after t).
std::uint32_t BufferedCloud::holding(double t) const {
  std::uint32_t n = 0;
  for (const auto& loop : loops_)
    n += loop.phase != Loop::Phase::waiting || (loop.slot_pending && loop.slot_until > t) ? 1 : 0;
  return n;
}

// Slots free at t go to the waiting pulls, first due first (ties by edge), each at t or its due
// time, whichever is later; one that finds its edge offline pulls again when it is back.
void BufferedCloud::wake_queued(double t, const NamedTensors& global) {
  while (holding(t) < concurrency_) {
    std::uint32_t first = 0;
    double due = kNever;
    for (std::uint32_t e = 0; e < edges_.size(); ++e)
      if (loops_[e].queued && loops_[e].pull_at < due) due = loops_[e].pull_at, first = e;
    if (due == kNever) return;
    auto& loop = loops_[first];
    loop.queued = false;
    const double at = std::max(t, due);
    if (!presence_.online(first, at)) {
      loop.pull_at = presence_.next_online(first, at);
      continue;
    }
    begin_loop(first, at, global);
  }
}

double BufferedCloud::next_event() const {
  double next = kNever;
  for (const auto& loop : loops_) {
    if (loop.phase == Loop::Phase::waiting && !loop.queued) next = std::min(next, loop.pull_at);
    if (loop.phase == Loop::Phase::waiting && loop.slot_pending) next = std::min(next, loop.slot_until);
    if (loop.phase == Loop::Phase::sending) next = std::min(next, loop.sent.arrival);
  }
  return next;
}

}  // namespace drift
