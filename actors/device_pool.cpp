#include "actors/device_pool.hpp"

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <sstream>
#include <variant>

#include "actors/wire.hpp"

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
using Clock = std::chrono::steady_clock;

// One device of the pool (a local CPU or GPU, or a worker) and its bookkeeping.
struct Device {
  std::string name;
  caf::actor agent;              // a worker's agent; invalid for a local device
  DeviceSlots capacity;          // slots: 0 once lost, let go or released
  std::uint32_t running = 0;     // jobs running
  std::deque<std::size_t> idle;  // idle slots, lowest first
  bool pinging = false;          // a heartbeat is outstanding
  double job_seconds = 0.0;      // mean wall seconds of its finished jobs
  std::uint64_t jobs_done = 0;
};

class Pool {
 public:
  Pool(PoolSelf self, std::shared_ptr<RunObserver> observer, WorkerWatch watch)
      : self_(self), observer_(std::move(observer)), watch_(watch) {}

  void add_device(std::string name, const torch::Device& where, const std::vector<slot_actor>& slots,
                  caf::actor agent) {
    const auto d = devices_.size();
    Device device;
    device.name = std::move(name);
    device.agent = std::move(agent);
    device.capacity = DeviceSlots{where, static_cast<std::uint32_t>(slots.size())};
    for (const auto& s : slots) {
      device.idle.push_back(slot_of_.size());
      slot_of_.push_back({s, d});
    }
    devices_.push_back(std::move(device));
  }

  void add_worker(std::string name, caf::actor agent, const std::vector<slot_actor>& slots) {
    self_->monitor(agent);
    add_device("worker '" + name + "'", torch::kCPU, slots, agent);
    no_slots_reason_.clear();  // e.g. the only worker died while the others were still joining
    const auto live = live_workers();
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
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      if (!live(d) || !devices_[d].agent) continue;
      any = true;
      ping(d);
      if (const auto late = overdue_job(d)) unresponsive(d, *late);
    }
    ticking_ = any;
    if (any) self_->delayed_send(self_, std::chrono::seconds(1), tick_atom::value);
  }

  // Replies once `n` workers are live (joined and not lost).
  void await(std::uint32_t n, caf::typed_response_promise<std::uint32_t> promise) {
    if (live_workers() >= n)
      promise.deliver(live_workers());
    else
      waiting_.emplace_back(n, std::move(promise));
  }

  void submit(Job job) {
    if (!no_slots_reason_.empty()) return refuse(job, make_pool_error(PoolError::no_slots, no_slots_reason_));
    queue_.push_back(std::move(job));
    dispatch();
  }

  // A worker's agent went down: its connection broke or its process died.
  void on_down(const caf::down_msg& down) {
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      if (!live(d) || devices_[d].agent.address() != down.source) continue;
      const auto why = devices_[d].name + " lost (" + exit_text(down.reason) + ")";
      auto lost = retire(d);
      for (auto& job : lost)
        refuse(job, make_pool_error(PoolError::worker_lost, why + " while its client was training"));
      observer_->on_warning(why + "; " + std::to_string(lost.size()) +
                            " running job(s) lost (training clients become dropouts, evaluations run again)");
      refuse_all_if_no_slot(why);
    }
    dispatch();
  }

  // A worker's slots stop counting; its running jobs go back to the front of the queue, in
  // their order, and its late answers are ignored (finish() no longer knows the jobs).
  void unresponsive(std::size_t d, const std::string& why) {
    auto again = retire(d);
    for (auto it = again.rbegin(); it != again.rend(); ++it) queue_.push_front(std::move(*it));
    observer_->on_warning(devices_[d].name + " stopped answering (" + why + "); " + std::to_string(again.size()) +
                          " running job(s) run elsewhere, and the worker is let go");
    caf::anon_send(devices_[d].agent, finish_atom::value);  // if it ever wakes up, it quits
    refuse_all_if_no_slot(devices_[d].name + " stopped answering (" + why + ")");
    dispatch();
  }

  // Tells every live worker the run is over and waits (briefly) for each to acknowledge.
  // Replies with the number of workers told.
  void release(caf::typed_response_promise<std::uint32_t> promise) {
    // Released workers quit, and their agents' down messages are then no loss.
    std::vector<caf::actor> agents;
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      if (!live(d) || !devices_[d].agent) continue;
      agents.push_back(devices_[d].agent);
      devices_[d].capacity.slots = 0;
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
  struct Slot {
    slot_actor handle;
    std::size_t device;
  };
  struct Running {
    Job job;
    std::size_t slot;
    Clock::time_point started;
  };

  // The one way a device leaves: its slots stop counting and its running jobs come back, in
  // their order, for the caller to refuse or queue again. Late answers are then ignored
  // (finish() no longer knows the jobs).
  std::vector<Job> retire(std::size_t d) {
    auto& device = devices_[d];
    device.capacity.slots = 0;
    device.running = 0;
    device.idle.clear();
    std::vector<Job> jobs;
    for (auto it = running_jobs_.begin(); it != running_jobs_.end();) {
      if (slot_of_[it->second.slot].device != d) {
        ++it;
        continue;
      }
      jobs.push_back(std::move(it->second.job));
      it = running_jobs_.erase(it);
    }
    return jobs;
  }

  // After a device left: with no slot anywhere, every queued and later job is refused.
  void refuse_all_if_no_slot(const std::string& why) {
    if (live_slots() > 0) return;
    no_slots_reason_ = "no trainer slot remains: " + why;
    for (auto& job : queue_) refuse(job, make_pool_error(PoolError::no_slots, no_slots_reason_));
    queue_.clear();
  }

  void ping(std::size_t d) {
    if (devices_[d].pinging) return;
    devices_[d].pinging = true;
    const auto agent = devices_[d].agent;
    const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(watch_.heartbeat_timeout_s * 1000));
    self_->request(agent, timeout, ping_atom::value)
        .then([this, d]() { devices_[d].pinging = false; },
              [this, d, agent](caf::error& err) {
                devices_[d].pinging = false;
                if (!live(d) || devices_[d].agent != agent) return;  // lost or let go meanwhile
                if (err == caf::sec::request_timeout)
                  unresponsive(d, "no answer to a heartbeat within " + seconds_text(watch_.heartbeat_timeout_s));
              });
  }

  // Why a job of device d is overdue, if one is: it ran longer than deadline_factor times the
  // device's mean job and longer than deadline_min_s. No deadline before the first finished job.
  std::optional<std::string> overdue_job(std::size_t d) const {
    const auto& device = devices_[d];
    if (device.jobs_done == 0) return std::nullopt;
    const double deadline = std::max(watch_.deadline_min_s, watch_.deadline_factor * device.job_seconds);
    const auto now = Clock::now();
    for (const auto& [id, r] : running_jobs_) {
      if (slot_of_[r.slot].device != d) continue;
      const double ran = std::chrono::duration<double>(now - r.started).count();
      if (ran > deadline)
        return "a job ran " + seconds_text(ran) + ", past its deadline of " + seconds_text(deadline) + " (" +
               seconds_text(watch_.deadline_factor) + " x its mean job of " + seconds_text(device.job_seconds) + ")";
    }
    return std::nullopt;
  }

  static std::string seconds_text(double s) {
    std::ostringstream out;
    out.precision(3);
    out << s << " s";
    return out.str();
  }

  // A device is live while it has slots: a lost or released worker's drop to 0.
  bool live(std::size_t d) const { return devices_[d].capacity.slots > 0; }

  std::uint32_t live_workers() const {
    std::uint32_t n = 0;
    for (std::size_t d = 0; d < devices_.size(); ++d) n += live(d) && devices_[d].agent;
    return n;
  }

  std::size_t live_slots() const {
    std::size_t n = 0;
    for (const auto& device : devices_) n += device.capacity.slots;
    return n;
  }

  static void refuse(Job& job, caf::error err) {
    std::visit([&](auto& j) { j.promise.deliver(err); }, job);
  }

  void dispatch() {
    while (!queue_.empty()) {
      std::vector<DeviceSlots> capacity;
      std::vector<std::uint32_t> running;
      for (const auto& device : devices_) {
        capacity.push_back(device.capacity);
        running.push_back(device.running);
      }
      const auto chosen = least_loaded_device(capacity, running);
      if (!chosen) return;
      auto& device = devices_[*chosen];
      const auto slot = device.idle.front();
      device.idle.pop_front();
      ++device.running;
      const auto id = next_job_++;
      auto& entry = running_jobs_.emplace(id, Running{std::move(queue_.front()), slot, Clock::now()}).first->second;
      queue_.pop_front();
      const auto& handle = slot_of_[slot].handle;
      if (auto* t = std::get_if<QueuedTraining>(&entry.job)) {
        self_->request(handle, caf::infinite, train_atom::value, t->state, t->task)
            .then([this, id](Buffer& update,
                             Buffer& state) { finish<QueuedTraining>(id, std::move(update), std::move(state)); },
                  [this, id](caf::error& err) { finish<QueuedTraining>(id, std::move(err)); });
      } else if (auto* p = std::get_if<QueuedPack>(&entry.job)) {
        self_->request(handle, caf::infinite, pack_atom::value, p->task, p->pack)
            .then([this, id](Buffer& result) { finish<QueuedPack>(id, std::move(result)); },
                  [this, id](caf::error& err) { finish<QueuedPack>(id, std::move(err)); });
      } else {
        auto& e = std::get<QueuedEvaluation>(entry.job);
        self_->request(handle, caf::infinite, eval_atom::value, e.job, e.weights)
            .then([this, id](Buffer& result) { finish<QueuedEvaluation>(id, std::move(result)); },
                  [this, id](caf::error& err) { finish<QueuedEvaluation>(id, std::move(err)); });
      }
    }
  }

  // A slot answered. Answers for jobs already failed because their worker was lost are dropped.
  template <class Kind, class... Ts>
  void finish(std::uint64_t id, Ts&&... reply) {
    auto it = running_jobs_.find(id);
    if (it == running_jobs_.end()) return;
    const auto slot = it->second.slot;
    const double took = std::chrono::duration<double>(Clock::now() - it->second.started).count();
    std::get<Kind>(it->second.job).promise.deliver(std::forward<Ts>(reply)...);
    running_jobs_.erase(it);
    const auto d = slot_of_[slot].device;
    auto& device = devices_[d];
    device.job_seconds += (took - device.job_seconds) / static_cast<double>(++device.jobs_done);  // running mean
    if (live(d)) {
      --device.running;
      device.idle.push_back(slot);
    }
    dispatch();
  }

  PoolSelf self_;
  std::shared_ptr<RunObserver> observer_;
  WorkerWatch watch_;
  bool ticking_ = false;
  std::vector<Device> devices_;
  std::vector<Slot> slot_of_;
  std::deque<Job> queue_;
  std::map<std::uint64_t, Running> running_jobs_;
  std::uint64_t next_job_ = 0;
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

pool_actor::behavior_type device_pool(pool_actor::pointer self, std::vector<DeviceSlots> local, SlotContext ctx,
                                      std::shared_ptr<RunObserver> observer, WorkerWatch watch) {
  auto pool = std::make_shared<Pool>(self, std::move(observer), watch);
  for (const auto& d : local) {
    std::vector<slot_actor> slots;
    for (std::uint32_t k = 0; k < d.slots; ++k)
      slots.push_back(self->spawn<caf::detached + caf::linked>(trainer_slot, d.device, ctx));
    pool->add_device(d.name(), d.device, slots, caf::actor{});
  }
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
      [=](release_atom) -> caf::result<std::uint32_t> {
        if (auto refused = foreign_sender(self)) return refused;
        auto promise = self->make_response_promise<std::uint32_t>();
        pool->release(promise);
        return promise;
      },
  };
}

}  // namespace drift::actors
