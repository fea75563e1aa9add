#pragma once
// The device pool's rules, without its messaging: which slot runs the next job, how a device's
// jobs come back when it leaves, and when a worker's job is overdue. The pool actor keeps the
// slots' handles and the jobs' reply promises; everything it decides is decided here, in plain
// C++ that the unit tests drive with made-up clocks.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/training/devices.hpp"

namespace drift {

// When a worker's job counts as hung: it ran longer than `factor` times the device's mean job
// and longer than `min_seconds`. A device has no deadline before its first finished job.
struct JobDeadline {
  double factor = 10;
  double min_seconds = 60;
};

template <class Job>
class JobBoard {
 public:
  // A job just given a slot: the caller sends it there and later reports finish(id).
  struct Started {
    std::uint64_t id;
    std::size_t slot;
    Job& job;
  };

  // A device and its slots, numbered after every earlier device's; `remote` for a worker.
  std::size_t add_device(std::string name, DeviceSlots capacity, bool remote) {
    Device device;
    device.name = std::move(name);
    device.remote = remote;
    device.capacity = capacity;
    for (std::uint32_t k = 0; k < capacity.slots; ++k) {
      device.idle.push_back(device_of_slot_.size());
      device_of_slot_.push_back(devices_.size());
      jobs_on_slot_.push_back(0);
    }
    devices_.push_back(std::move(device));
    return devices_.size() - 1;
  }

  // An evaluation lane: a slot that runs only the jobs submitted for lanes, so that a round's
  // evaluation overlaps the next round's training (devices.eval_lanes). Numbered after every
  // slot added so far; it belongs to no device (a worker's retirement never takes it).
  std::size_t add_lane() {
    const auto slot = device_of_slot_.size();
    device_of_slot_.push_back(kLaneSlot);
    jobs_on_slot_.push_back(0);
    idle_lanes_.push_back(slot);
    ++lanes_;
    return slot;
  }

  // `for_lane`: the job may run on an evaluation lane, and does when the board has one (it
  // then waits for a lane, never for a training slot).
  void submit(Job job, bool for_lane = false) {
    (for_lane && lanes_ > 0 ? lane_queue_ : queue_).push_back(std::move(job));
  }

  // Whether workers' slots take jobs ahead too (see start_next); before any device is added.
  void hold_ahead_at_workers(bool hold) { remote_ahead_ = hold; }

  // Jobs that must run before anything queued (a let-go worker's), in their order.
  void requeue_first(std::vector<Job> jobs) {
    for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) queue_.push_front(std::move(*it));
  }

  // Every queued job, for the caller to refuse: the queue is empty afterwards.
  std::vector<Job> take_queued() {
    std::vector<Job> jobs;
    for (auto* q : {&lane_queue_, &queue_}) {
      jobs.insert(jobs.end(), std::make_move_iterator(q->begin()), std::make_move_iterator(q->end()));
      q->clear();
    }
    return jobs;
  }

  // The next queued job on the lowest idle slot of the least loaded device; none when the
  // queue is empty or no slot is idle. `now`: seconds on the caller's clock.
  //
  // When no slot is idle and more jobs wait than there are slots, a busy local slot takes one
  // job ahead: it waits in the slot's mailbox and starts the moment the job before it ends,
  // without the round trip through the pool that would leave the slot (and its GPU) idle
  // between jobs. Near a round's end, when fewer jobs wait than there are slots, they wait here
  // for the first slot that frees, so that no job queues behind a long one while a slot idles.
  // Workers take no jobs ahead unless hold_ahead_at_workers: a lost worker would lose the job it
  // held too, and their jobs' deadlines count from the moment they are sent.
  // Lane jobs start first, on the lowest idle lane.
  std::optional<Started> start_next(double now) {
    if (!lane_queue_.empty() && !idle_lanes_.empty()) {
      const auto slot = idle_lanes_.front();
      idle_lanes_.pop_front();
      return start(lane_queue_, slot, now);
    }
    if (queue_.empty()) return std::nullopt;
    std::vector<DeviceSlots> capacity;
    std::vector<std::uint32_t> busy;
    for (const auto& device : devices_) {
      capacity.push_back(device.capacity);
      busy.push_back(device.capacity.slots - static_cast<std::uint32_t>(device.idle.size()));
    }
    std::size_t slot = 0;
    if (const auto chosen = least_loaded_device(capacity, busy)) {
      auto& device = devices_[*chosen];
      slot = device.idle.front();
      device.idle.pop_front();
      if (!device.remote || remote_ahead_) device.ahead.push_back(slot);
    } else if (const auto ahead = slot_with_room_ahead()) {
      slot = *ahead;
    } else {
      return std::nullopt;
    }
    return start(queue_, slot, now);
  }

  // A slot answered job `id`: its job back, its device's mean job time updated, and the slot
  // idle again (or on with the job it held ahead). None for a job its device's retirement
  // already gave back.
  std::optional<Job> finish(std::uint64_t id, double now) {
    auto it = running_.find(id);
    if (it == running_.end()) return std::nullopt;
    Job job = std::move(it->second.job);
    const auto slot = it->second.slot;
    const double took = now - it->second.started;
    running_.erase(it);
    if (device_of_slot_[slot] == kLaneSlot) {
      --jobs_on_slot_[slot];
      idle_lanes_.push_back(slot);
      std::sort(idle_lanes_.begin(), idle_lanes_.end());
      return job;
    }
    auto& device = devices_[device_of_slot_[slot]];
    device.job_seconds += (took - device.job_seconds) / static_cast<double>(++device.jobs_done);  // running mean
    if (device.capacity.slots > 0) {
      // The slot goes on with the job it holds ahead, if any, and may take another ahead.
      if (--jobs_on_slot_[slot] == 0) {
        device.ahead.erase(std::remove(device.ahead.begin(), device.ahead.end(), slot), device.ahead.end());
        device.idle.push_back(slot);
      } else if (!device.remote || remote_ahead_) {
        device.ahead.push_back(slot);
      }
    }
    return job;
  }

  // The one way a device leaves: its slots stop counting and its running jobs come back in
  // the order they started, for the caller to refuse or requeue. Their late answers are then
  // unknown to finish().
  std::vector<Job> retire(std::size_t d) {
    auto& device = devices_[d];
    device.capacity.slots = 0;
    device.idle.clear();
    device.ahead.clear();
    std::vector<Job> jobs;
    for (auto it = running_.begin(); it != running_.end();) {
      if (device_of_slot_[it->second.slot] != d) {
        ++it;
        continue;
      }
      jobs.push_back(std::move(it->second.job));
      it = running_.erase(it);
    }
    return jobs;
  }

  // A released device: its slots stop counting, and what it still runs is answered as usual.
  void let_go(std::size_t d) {
    devices_[d].capacity.slots = 0;
    devices_[d].idle.clear();
    devices_[d].ahead.clear();
  }

  // Why a job of device d is overdue at `now`, if one is.
  std::optional<std::string> overdue(std::size_t d, double now, const JobDeadline& rule) const {
    const auto& device = devices_[d];
    if (device.jobs_done == 0) return std::nullopt;
    const double deadline = std::max(rule.min_seconds, rule.factor * device.job_seconds);
    for (const auto& [id, r] : running_) {
      if (device_of_slot_[r.slot] != d) continue;
      const double ran = now - r.started;
      if (ran > deadline)
        return "a job ran " + seconds_text(ran) + ", past its deadline of " + seconds_text(deadline) + " (" +
               seconds_text(rule.factor) + " x its mean job of " + seconds_text(device.job_seconds) + ")";
    }
    return std::nullopt;
  }

  std::size_t devices() const { return devices_.size(); }
  const std::string& name(std::size_t d) const { return devices_[d].name; }
  bool remote(std::size_t d) const { return devices_[d].remote; }
  // A device is live while it has slots: a retired one has none.
  bool live(std::size_t d) const { return devices_[d].capacity.slots > 0; }
  std::uint32_t live_workers() const {
    std::uint32_t n = 0;
    for (std::size_t d = 0; d < devices_.size(); ++d) n += live(d) && remote(d);
    return n;
  }
  std::size_t live_slots() const {
    std::size_t n = 0;
    for (const auto& device : devices_) n += device.capacity.slots;
    return n;
  }
  std::size_t queued() const { return queue_.size() + lane_queue_.size(); }
  std::size_t lanes() const { return lanes_; }

  static std::string seconds_text(double s) {
    std::ostringstream out;
    out.precision(3);
    out << s << " s";
    return out.str();
  }

 private:
  static constexpr std::size_t kLaneSlot = static_cast<std::size_t>(-1);  // device_of_slot_ of a lane

  Started start(std::deque<Job>& queue, std::size_t slot, double now) {
    ++jobs_on_slot_[slot];
    const auto id = next_id_++;
    auto& entry = running_.emplace(id, Running{std::move(queue.front()), slot, now}).first->second;
    queue.pop_front();
    return Started{id, slot, entry.job};
  }

  // A busy local slot that may take a job ahead, while more jobs wait than there are slots.
  std::optional<std::size_t> slot_with_room_ahead() {
    if (queue_.size() <= live_slots()) return std::nullopt;
    for (auto& device : devices_) {
      if (device.ahead.empty()) continue;
      const auto slot = device.ahead.front();
      device.ahead.pop_front();
      return slot;
    }
    return std::nullopt;
  }

  struct Device {
    std::string name;
    bool remote = false;
    DeviceSlots capacity;           // slots: 0 once retired
    std::deque<std::size_t> idle;   // idle slots, lowest first
    std::deque<std::size_t> ahead;  // busy slots that may take a job ahead and hold none yet
    double job_seconds = 0.0;       // mean seconds of its finished jobs (a job taken ahead counts its wait)
    std::uint64_t jobs_done = 0;
  };
  struct Running {
    Job job;
    std::size_t slot;
    double started;
  };

  std::vector<Device> devices_;
  std::vector<std::size_t> device_of_slot_;
  std::vector<std::uint8_t> jobs_on_slot_;  // 0 idle, 1 running, 2 running with one ahead
  std::deque<Job> queue_;
  std::deque<Job> lane_queue_;  // jobs for the evaluation lanes, when there are any
  std::deque<std::size_t> idle_lanes_;
  std::size_t lanes_ = 0;
  std::map<std::uint64_t, Running> running_;  // by id: the order jobs started
  std::uint64_t next_id_ = 0;
  bool remote_ahead_ = false;  // workers' slots take jobs ahead too
};

}  // namespace drift
