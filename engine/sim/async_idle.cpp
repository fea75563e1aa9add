#include "engine/sim/async_idle.hpp"

#include <sstream>

#include "engine/population/availability.hpp"

namespace drift {
namespace {

// "12.5 s": a virtual time in a reason.
std::string seconds_text(double t) {
  std::ostringstream out;
  out << t << " s";
  return out.str();
}

}  // namespace

bool AsyncIdle::wait(double& now, double next, std::string& why) {
  if (next == kNever) {
    why = "no client can train after virtual time " + seconds_text(now) +
          ": none is online or will come online again, and no timeline entry is left";
    return false;
  }
  if (next > now) {
    retries_ = 0;
    now = next;
  } else {
    // Someone is online, yet the sampler chose nobody (its fraction is 0, say): look again later.
    if (++retries_ > kMaxRetries) {
      why = "the sampler chose nobody for " + std::to_string(kMaxRetries) + " consecutive looks, " +
            seconds_text(kRetry) + " apart, although clients were online";
      return false;
    }
    now += kRetry;
  }
  instant_drops_ = 0;
  return true;
}

bool AsyncIdle::instant_drop(double now, bool idle_online_now, std::string& why) {
  if (!idle_online_now) {
    stalled_at_ = now;
    return true;
  }
  const auto limit = kMaxInstantDropsPerSlot * static_cast<std::uint64_t>(concurrency_);
  if (++instant_drops_ <= limit) return true;
  why = "at virtual time " + seconds_text(now) + " the sampler chose " + std::to_string(limit) +
        " clients in a row that dropped out at once, although others were online";
  return false;
}

void AsyncIdle::archive(StateArchive& ar) {
  ar.value(retries_);
  ar.value(instant_drops_);
  ar.value(stalled_at_);
}

}  // namespace drift
