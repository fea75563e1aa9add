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

struct TrainJob {
  Buffer state, task;
  caf::typed_response_promise<Buffer, Buffer> promise;
};
struct EvalJob {
  Buffer job, weights;
  caf::typed_response_promise<Buffer> promise;
};
// Clients of one round trained together (devices.pack): one job, one slot, one answer.
struct PackJob {
  Buffer task, pack;
  caf::typed_response_promise<Buffer> promise;
};
using Job = std::variant<TrainJob, EvalJob, PackJob>;

using PoolSelf = pool_actor::pointer;
using Clock = std::chrono::steady_clock;

struct Device {
  std::string name;
  caf::actor agent;  // a worker's agent; invalid for a local device
};

class Pool {
 public:
  Pool(PoolSelf self, std::shared_ptr<RunObserver> observer, WorkerWatch watch)
      : self_(self), observer_(std::move(observer)), watch_(watch) {}

  void add_device(std::string name, const torch::Device& where, const std::vector<slot_actor>& slots,
                  caf::actor agent) {
    const auto d = devices_.size();
    devices_.push_back({std::move(name), std::move(agent)});
    capacity_.push_back(DeviceSlots{where, static_cast<std::uint32_t>(slots.size())});
    running_.push_back(0);
    pinging_.push_back(0);
    job_seconds_.push_back(0.0);
    jobs_done_.push_back(0);
    idle_.emplace_back();
    for (const auto& s : slots) {
      idle_[d].push_back(slot_of_.size());
      slot_of_.push_back({s, d});
    }
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
      capacity_[d].slots = 0;
      running_[d] = 0;
      idle_[d].clear();
      const auto why = devices_[d].name + " lost (" + exit_text(down.reason) + ")";
      std::size_t lost = 0;
      for (auto it = running_jobs_.begin(); it != running_jobs_.end();) {
        if (slot_of_[it->second.slot].device != d) {
          ++it;
          continue;
        }
        refuse(it->second.job, make_pool_error(PoolError::worker_lost, why + " while its client was training"));
        it = running_jobs_.erase(it);
        ++lost;
      }
      observer_->on_warning(why + "; " + std::to_string(lost) +
                            " running job(s) lost (training clients become dropouts, evaluations run again)");
      if (live_slots() == 0) {
        no_slots_reason_ = "no trainer slot remains: " + why;
        for (auto& job : queue_) refuse(job, make_pool_error(PoolError::no_slots, no_slots_reason_));
        queue_.clear();
      }
    }
    dispatch();
  }

  // A worker's slots stop counting; its running jobs go back to the front of the queue, in
  // their order, and its late answers are ignored (finish() no longer knows the jobs).
  void unresponsive(std::size_t d, const std::string& why) {
    capacity_[d].slots = 0;
    running_[d] = 0;
    idle_[d].clear();
    std::vector<Job> again;
    for (auto it = running_jobs_.begin(); it != running_jobs_.end();) {
      if (slot_of_[it->second.slot].device != d) {
        ++it;
        continue;
      }
      again.push_back(std::move(it->second.job));
      it = running_jobs_.erase(it);
    }
    for (auto it = again.rbegin(); it != again.rend(); ++it) queue_.push_front(std::move(*it));
    observer_->on_warning(devices_[d].name + " stopped answering (" + why + "); " + std::to_string(again.size()) +
                          " running job(s) run elsewhere, and the worker is let go");
    caf::anon_send(devices_[d].agent, finish_atom::value);  // if it ever wakes up, it quits
    if (live_slots() == 0) {
      no_slots_reason_ = "no trainer slot remains: " + devices_[d].name + " stopped answering (" + why + ")";
      for (auto& job : queue_) refuse(job, make_pool_error(PoolError::no_slots, no_slots_reason_));
      queue_.clear();
    }
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
      capacity_[d].slots = 0;
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

  void ping(std::size_t d) {
    if (pinging_[d]) return;
    pinging_[d] = 1;
    const auto agent = devices_[d].agent;
    const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(watch_.heartbeat_timeout_s * 1000));
    self_->request(agent, timeout, ping_atom::value)
        .then([this, d]() { pinging_[d] = 0; },
              [this, d, agent](caf::error& err) {
                pinging_[d] = 0;
                if (!live(d) || devices_[d].agent != agent) return;  // lost or let go meanwhile
                if (err == caf::sec::request_timeout)
                  unresponsive(d, "no answer to a heartbeat within " + seconds_text(watch_.heartbeat_timeout_s));
              });
  }

  // Why a job of device d is overdue, if one is: it ran longer than deadline_factor times the
  // device's mean job and longer than deadline_min_s. No deadline before the first finished job.
  std::optional<std::string> overdue_job(std::size_t d) const {
    if (jobs_done_[d] == 0) return std::nullopt;
    const double deadline = std::max(watch_.deadline_min_s, watch_.deadline_factor * job_seconds_[d]);
    const auto now = Clock::now();
    for (const auto& [id, r] : running_jobs_) {
      if (slot_of_[r.slot].device != d) continue;
      const double ran = std::chrono::duration<double>(now - r.started).count();
      if (ran > deadline)
        return "a job ran " + seconds_text(ran) + ", past its deadline of " + seconds_text(deadline) + " (" +
               seconds_text(watch_.deadline_factor) + " x its mean job of " + seconds_text(job_seconds_[d]) + ")";
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
  bool live(std::size_t d) const { return capacity_[d].slots > 0; }

  std::uint32_t live_workers() const {
    std::uint32_t n = 0;
    for (std::size_t d = 0; d < devices_.size(); ++d) n += live(d) && devices_[d].agent;
    return n;
  }

  std::size_t live_slots() const {
    std::size_t n = 0;
    for (const auto& c : capacity_) n += c.slots;
    return n;
  }

  static void refuse(Job& job, caf::error err) {
    std::visit([&](auto& j) { j.promise.deliver(err); }, job);
  }

  void dispatch() {
    while (!queue_.empty()) {
      const auto device = least_loaded_device(capacity_, running_);
      if (!device) return;
      const auto slot = idle_[*device].front();
      idle_[*device].pop_front();
      ++running_[*device];
      const auto id = next_job_++;
      auto& entry = running_jobs_.emplace(id, Running{std::move(queue_.front()), slot, Clock::now()}).first->second;
      queue_.pop_front();
      const auto& handle = slot_of_[slot].handle;
      if (auto* t = std::get_if<TrainJob>(&entry.job)) {
        self_->request(handle, caf::infinite, train_atom::value, t->state, t->task)
            .then([this, id](Buffer& update,
                             Buffer& state) { finish<TrainJob>(id, std::move(update), std::move(state)); },
                  [this, id](caf::error& err) { finish<TrainJob>(id, std::move(err)); });
      } else if (auto* p = std::get_if<PackJob>(&entry.job)) {
        self_->request(handle, caf::infinite, pack_atom::value, p->task, p->pack)
            .then([this, id](Buffer& result) { finish<PackJob>(id, std::move(result)); },
                  [this, id](caf::error& err) { finish<PackJob>(id, std::move(err)); });
      } else {
        auto& e = std::get<EvalJob>(entry.job);
        self_->request(handle, caf::infinite, eval_atom::value, e.job, e.weights)
            .then([this, id](Buffer& result) { finish<EvalJob>(id, std::move(result)); },
                  [this, id](caf::error& err) { finish<EvalJob>(id, std::move(err)); });
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
    job_seconds_[d] += (took - job_seconds_[d]) / static_cast<double>(++jobs_done_[d]);  // running mean
    if (live(d)) {
      --running_[d];
      idle_[d].push_back(slot);
    }
    dispatch();
  }

  PoolSelf self_;
  std::shared_ptr<RunObserver> observer_;
  WorkerWatch watch_;
  bool ticking_ = false;
  std::vector<char> pinging_;        // device -> a heartbeat is outstanding
  std::vector<double> job_seconds_;  // device -> mean wall seconds of its finished jobs
  std::vector<std::uint64_t> jobs_done_;
  std::vector<Device> devices_;
  std::vector<DeviceSlots> capacity_;          // device -> slots (0 once lost or released)
  std::vector<std::uint32_t> running_;         // device -> jobs running
  std::vector<std::deque<std::size_t>> idle_;  // device -> idle slots, lowest first
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
        pool->submit(TrainJob{state, task, promise});
        return promise;
      },
      [=](eval_atom, const Buffer& job, const Buffer& weights) -> caf::result<Buffer> {
        if (auto refused = foreign_sender(self)) return refused;
        auto promise = self->make_response_promise<Buffer>();
        pool->submit(EvalJob{job, weights, promise});
        return promise;
      },
      [=](pack_atom, const Buffer& task, const Buffer& pack) -> caf::result<Buffer> {
        if (auto refused = foreign_sender(self)) return refused;
        auto promise = self->make_response_promise<Buffer>();
        pool->submit(PackJob{task, pack, promise});
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
