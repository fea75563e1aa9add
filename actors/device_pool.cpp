#include "actors/device_pool.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <sstream>
#include <variant>

#include "actors/wire.hpp"
#include "engine/training/job_board.hpp"

namespace drift::actors {
namespace {

struct QueuedTraining {
  Buffer state, task;
  caf::typed_response_promise<Buffer, Buffer> promise;
};
struct QueuedEvaluation {
  Buffer job, weights;
  caf::typed_response_promise<Buffer> promise;
};
// Clients of one round trained together (devices.pack): one job, one slot, one answer.
struct QueuedPack {
  Buffer task, pack;
  caf::typed_response_promise<Buffer> promise;
};
using Job = std::variant<QueuedTraining, QueuedEvaluation, QueuedPack>;

using PoolSelf = pool_actor::pointer;

// Seconds on the pool's clock, for the job board's deadlines and mean job times.
double seconds_now() {
  static const auto start = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class Pool {
 public:
  Pool(PoolSelf self, std::shared_ptr<RunObserver> observer, WorkerWatch watch)
      : self_(self), observer_(std::move(observer)), watch_(watch) {
    board_.hold_ahead_at_workers(watch.workers_hold_ahead);
  }

  void add_device(std::string name, const torch::Device& where, const std::vector<slot_actor>& slots,
                  caf::actor agent) {
    const bool remote = static_cast<bool>(agent);
    board_.add_device(std::move(name), DeviceSlots{where, static_cast<std::uint32_t>(slots.size())}, remote);
    agents_.push_back(std::move(agent));
    pinging_.push_back(false);
    handles_.insert(handles_.end(), slots.begin(), slots.end());
  }

  void add_lane(const slot_actor& slot) {
    const auto index = board_.add_lane();
    if (handles_.size() <= index) handles_.resize(index + 1);
    handles_[index] = slot;
  }

  void add_worker(std::string name, caf::actor agent, const std::vector<slot_actor>& slots) {
    self_->monitor(agent);
    add_device("worker '" + name + "'", torch::kCPU, slots, agent);
    no_slots_reason_.clear();  // e.g. the only worker died while the others were still joining
    const auto live = board_.live_workers();
    observer_->on_notice("worker '" + name + "' joined with " + std::to_string(slots.size()) + " trainer slot(s); " +
                         std::to_string(live) + " worker(s) live");
    while (!waiting_.empty() && live >= waiting_.front().first) {
      waiting_.front().second.deliver(live);
      waiting_.pop_front();
    }
    if (!ticking_) {
      ticking_ = true;
      self_->delayed_send(self_, std::chrono::seconds(1), tick_atom::value);
    }
    dispatch();
  }

  // Once a second while workers are live: ping each (one ping outstanding at a time), and let
  // go of a worker whose job ran past its deadline.
  void tick() {
    bool any = false;
    for (std::size_t d = 0; d < board_.devices(); ++d) {
      if (!board_.live(d) || !board_.remote(d)) continue;
      any = true;
      ping(d);
      if (const auto late = board_.overdue(d, seconds_now(), {watch_.deadline_factor, watch_.deadline_min_s}))
        unresponsive(d, *late);
    }
    ticking_ = any;
    if (any) self_->delayed_send(self_, std::chrono::seconds(1), tick_atom::value);
  }

  // Replies once `n` workers are live (joined and not lost).
  void await(std::uint32_t n, caf::typed_response_promise<std::uint32_t> promise) {
    if (board_.live_workers() >= n)
      promise.deliver(board_.live_workers());
    else
      waiting_.emplace_back(n, std::move(promise));
  }

  void submit(Job job) {
    if (!no_slots_reason_.empty()) return refuse(job, make_pool_error(PoolError::no_slots, no_slots_reason_));
    const bool evaluation = std::holds_alternative<QueuedEvaluation>(job);
    board_.submit(std::move(job), evaluation);
    dispatch();
  }

  // A worker's agent went down: its connection broke or its process died.
  void on_down(const caf::down_msg& down) {
    for (std::size_t d = 0; d < board_.devices(); ++d) {
      if (!board_.live(d) || agents_[d].address() != down.source) continue;
      const auto why = board_.name(d) + " lost (" + exit_text(down.reason) + ")";
      auto lost = board_.retire(d);
      for (auto& job : lost)
        refuse(job, make_pool_error(PoolError::worker_lost, why + " while its client was training"));
      const auto what = why + "; " + std::to_string(lost.size()) + " running job(s) lost";
      observer_->on_warning(what + " (training clients become dropouts, evaluations run again)");
      if (watch_.losses) watch_.losses->add(what);
      refuse_all_if_no_slot(why);
    }
    dispatch();
  }

  // A worker's slots stop counting; its running jobs go back to the front of the queue, in
  // their order, and its late answers are ignored (finish() no longer knows the jobs).
  void unresponsive(std::size_t d, const std::string& why) {
    auto again = board_.retire(d);
    const auto count = again.size();
    board_.requeue_first(std::move(again));
    observer_->on_warning(board_.name(d) + " stopped answering (" + why + "); " + std::to_string(count) +
                          " running job(s) run elsewhere, and the worker is let go");
    if (watch_.losses) watch_.losses->add(board_.name(d) + " stopped answering (" + why + ") and was let go");
    caf::anon_send(agents_[d], finish_atom::value);  // if it ever wakes up, it quits
    refuse_all_if_no_slot(board_.name(d) + " stopped answering (" + why + ")");
    dispatch();
  }

  // Asks every live worker's agent for an edge host, in the order the workers joined.
  void edge_hosts(caf::typed_response_promise<std::vector<edge_host_actor>> promise) {
    std::vector<caf::actor> agents;
    for (std::size_t d = 0; d < board_.devices(); ++d)
      if (board_.live(d) && board_.remote(d) && std::find(agents.begin(), agents.end(), agents_[d]) == agents.end())
        agents.push_back(agents_[d]);
    if (agents.empty())
      return promise.deliver(caf::make_error(caf::sec::runtime_error, std::string("no worker to keep edges"))), void();
    auto hosts = std::make_shared<std::vector<edge_host_actor>>(agents.size());
    auto remaining = std::make_shared<std::size_t>(agents.size());
    for (std::size_t i = 0; i < agents.size(); ++i)
      self_->request(agents[i], std::chrono::seconds(60), edges_atom::value)
          .then(
              [hosts, remaining, promise, i](edge_host_actor& host) mutable {
                (*hosts)[i] = std::move(host);
                if (--*remaining == 0) promise.deliver(*hosts);
              },
              [promise](caf::error& err) mutable {
                if (promise.pending()) promise.deliver(std::move(err));
              });
  }

  // Tells every live worker the run is over and waits (briefly) for each to acknowledge.
  // Replies with the number of workers told.
  void release(caf::typed_response_promise<std::uint32_t> promise) {
    // Released workers quit, and their agents' down messages are then no loss.
    std::vector<caf::actor> agents;
    for (std::size_t d = 0; d < board_.devices(); ++d) {
      if (!board_.live(d) || !board_.remote(d)) continue;
      agents.push_back(agents_[d]);
      board_.let_go(d);
    }
    if (agents.empty()) return promise.deliver(std::uint32_t{0}), void();
    auto remaining = std::make_shared<std::size_t>(agents.size());
    const auto told = static_cast<std::uint32_t>(agents.size());
    for (const auto& agent : agents) {
      auto done = [remaining, promise, told]() mutable {
        if (--*remaining == 0) promise.deliver(told);
      };
      self_->request(agent, std::chrono::seconds(10), finish_atom::value)
          .then([done]() mutable { done(); }, [done](caf::error&) mutable { done(); });
    }
  }

 private:
  // After a device left: with no slot anywhere, every queued and later job is refused.
  void refuse_all_if_no_slot(const std::string& why) {
    if (board_.live_slots() > 0) return;
    no_slots_reason_ = "no trainer slot remains: " + why;
    for (auto& job : board_.take_queued()) refuse(job, make_pool_error(PoolError::no_slots, no_slots_reason_));
  }

  void ping(std::size_t d) {
    if (pinging_[d]) return;
    pinging_[d] = true;
    const auto agent = agents_[d];
    const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(watch_.heartbeat_timeout_s * 1000));
    self_->request(agent, timeout, ping_atom::value)
        .then([this, d]() { pinging_[d] = false; },
              [this, d](caf::error& err) {
                pinging_[d] = false;
                if (!board_.live(d)) return;  // lost or let go meanwhile
                if (err == caf::sec::request_timeout)
                  unresponsive(
                      d, "no answer to a heartbeat within " + JobBoard<Job>::seconds_text(watch_.heartbeat_timeout_s));
              });
  }

  static void refuse(Job& job, caf::error err) {
    std::visit([&](auto& j) { j.promise.deliver(err); }, job);
  }

  void dispatch() {
    while (auto started = board_.start_next(seconds_now())) {
      const auto id = started->id;
      auto& job = started->job;
      const auto& handle = handles_[started->slot];
      if (auto* t = std::get_if<QueuedTraining>(&job)) {
        self_->request(handle, caf::infinite, train_atom::value, t->state, t->task)
            .then([this, id](Buffer& update,
                             Buffer& state) { finish<QueuedTraining>(id, std::move(update), std::move(state)); },
                  [this, id](caf::error& err) { finish<QueuedTraining>(id, std::move(err)); });
      } else if (auto* p = std::get_if<QueuedPack>(&job)) {
        self_->request(handle, caf::infinite, pack_atom::value, p->task, p->pack)
            .then([this, id](Buffer& result) { finish<QueuedPack>(id, std::move(result)); },
                  [this, id](caf::error& err) { finish<QueuedPack>(id, std::move(err)); });
      } else {
        auto& e = std::get<QueuedEvaluation>(job);
        self_->request(handle, caf::infinite, eval_atom::value, e.job, e.weights)
            .then([this, id](Buffer& result) { finish<QueuedEvaluation>(id, std::move(result)); },
                  [this, id](caf::error& err) { finish<QueuedEvaluation>(id, std::move(err)); });
      }
    }
  }

  // A slot answered. Answers for jobs already given back by their device's retirement are dropped.
  template <class Kind, class... Ts>
  void finish(std::uint64_t id, Ts&&... reply) {
    auto job = board_.finish(id, seconds_now());
    if (!job) return;
    std::get<Kind>(*job).promise.deliver(std::forward<Ts>(reply)...);
    dispatch();
  }

  PoolSelf self_;
  std::shared_ptr<RunObserver> observer_;
  WorkerWatch watch_;
  bool ticking_ = false;
  JobBoard<Job> board_;
  std::vector<caf::actor> agents_;   // by device: a worker's agent; invalid for a local device
  std::vector<bool> pinging_;        // by device: a heartbeat is outstanding
  std::vector<slot_actor> handles_;  // by slot, as the board numbers them
  std::deque<std::pair<std::uint32_t, caf::typed_response_promise<std::uint32_t>>> waiting_;
  std::string no_slots_reason_;
};

// Workers learn the pool's address from the jobs it sends them. Only actors of this process
// may submit jobs or manage workers: a message from elsewhere is answered with this error (if
// it asked for an answer) and otherwise ignored.
caf::error foreign_sender(PoolSelf self) {
  const auto& sender = self->current_sender();
  if (sender && sender->node() == self->node()) return caf::none;
  return caf::make_error(caf::sec::runtime_error,
                         std::string("the device pool takes orders only from its own process"));
}

}  // namespace

pool_actor::behavior_type device_pool(pool_actor::pointer self, std::vector<DeviceSlots> local,
                                      std::vector<torch::Device> lanes, SlotContext ctx,
                                      std::shared_ptr<RunObserver> observer, WorkerWatch watch) {
  auto pool = std::make_shared<Pool>(self, std::move(observer), watch);
  for (const auto& d : local) {
    std::vector<slot_actor> slots;
    for (std::uint32_t k = 0; k < d.slots; ++k)
      slots.push_back(self->spawn<caf::detached + caf::linked>(trainer_slot, d.device, ctx));
    pool->add_device(d.name(), d.device, slots, caf::actor{});
  }
  for (const auto& device : lanes) pool->add_lane(self->spawn<caf::detached + caf::linked>(trainer_slot, device, ctx));
  self->set_down_handler([pool](const caf::down_msg& down) { pool->on_down(down); });
  return {
      [=](train_atom, const Buffer& state, const Buffer& task) -> caf::result<Buffer, Buffer> {
        if (auto refused = foreign_sender(self)) return refused;
        auto promise = self->make_response_promise<Buffer, Buffer>();
        pool->submit(QueuedTraining{state, task, promise});
        return promise;
      },
      [=](eval_atom, const Buffer& job, const Buffer& weights) -> caf::result<Buffer> {
        if (auto refused = foreign_sender(self)) return refused;
        auto promise = self->make_response_promise<Buffer>();
        pool->submit(QueuedEvaluation{job, weights, promise});
        return promise;
      },
      [=](pack_atom, const Buffer& task, const Buffer& pack) -> caf::result<Buffer> {
        if (auto refused = foreign_sender(self)) return refused;
        auto promise = self->make_response_promise<Buffer>();
        pool->submit(QueuedPack{task, pack, promise});
        return promise;
      },
      [=](worker_atom, const std::string& name, const caf::actor& agent,
          const std::vector<slot_actor>& slots) -> caf::result<void> {
        if (auto refused = foreign_sender(self)) return refused;
        pool->add_worker(name, agent, slots);
        return caf::unit;
      },
      [=](await_atom, std::uint32_t n) -> caf::result<std::uint32_t> {
        if (auto refused = foreign_sender(self)) return refused;
        auto promise = self->make_response_promise<std::uint32_t>();
        pool->await(n, promise);
        return promise;
      },
      [=](tick_atom) {
        if (self->current_sender().get() == self->ctrl()) pool->tick();  // only its own timer
      },
      [=](edges_atom) -> caf::result<std::vector<edge_host_actor>> {
        if (auto refused = foreign_sender(self)) return refused;
        auto promise = self->make_response_promise<std::vector<edge_host_actor>>();
        pool->edge_hosts(promise);
        return promise;
      },
      [=](release_atom) -> caf::result<std::uint32_t> {
        if (auto refused = foreign_sender(self)) return refused;
        auto promise = self->make_response_promise<std::uint32_t>();
        pool->release(promise);
        return promise;
      },
  };
}

}  // namespace drift::actors
