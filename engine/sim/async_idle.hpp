#pragma once
// The asynchronous drivers' rules for when nothing happens: nobody runs and the sampler chose
// nobody, or the clients it chooses drop out the moment they are dispatched. Each either moves
// virtual time on or ends the run with its reason, so that a run can neither spin for ever at
// one virtual time nor stop while someone could still train.
#include <cstdint>
#include <string>

#include "engine/core/state_archive.hpp"

namespace drift {

class AsyncIdle {
 public:
  // When someone is online but the sampler chose nobody, look again this much later (virtual
  // seconds), at most this many times in a row.
  static constexpr double kRetry = 60.0;
  static constexpr int kMaxRetries = 100000;
  // Clients dropped at the moment they were dispatched, at one virtual time, before the run
  // concludes the sampler keeps choosing clients that cannot train (per slot of concurrency).
  static constexpr std::uint64_t kMaxInstantDropsPerSlot = 1000;

  explicit AsyncIdle(std::int64_t concurrency) : concurrency_(concurrency) {}

  // Nothing runs and the sampler chose nobody at `now`; `next`: when someone is next online or
  // the next timeline entry (kNever: neither). Moves `now` on; false when the run ends, with
  // `why` set.
  bool wait(double& now, double next, std::string& why);

  // An event at `time` was applied (virtual time was `now` before it).
  void event_applied(double time, double now) {
    retries_ = 0;
    if (time > now) instant_drops_ = 0;
  }
  // A job was launched: the sampler chose someone who can train.
  void launched() { instant_drops_ = 0; }

  // A client dropped the moment it was dispatched at `now`. If nobody idle is online now,
  // asking the sampler again at this time could only bring more such drops: the fills wait
  // until time moves (stalled_at). If someone is online, the sampler is asked again, a
  // bounded number of times. False when the run ends, with `why` set.
  bool instant_drop(double now, bool idle_online_now, std::string& why);
  // Whether fills wait at `now` because of an instant drop there.
  bool stalled(double now) const { return stalled_at_ == now; }

  void archive(StateArchive& ar);

 private:
  std::int64_t concurrency_;
  int retries_ = 0;
  std::uint64_t instant_drops_ = 0;  // in a row, while others were online
  double stalled_at_ = -1.0;         // a virtual time at which nobody idle was online
};

}  // namespace drift
