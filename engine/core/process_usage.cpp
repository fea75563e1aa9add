#include "engine/core/process_usage.hpp"

#include <sys/resource.h>

namespace drift {

namespace {

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; }

}  // namespace

ProcessUsage ProcessUsage::now() {
  rusage r{};
  ProcessUsage u;
  if (getrusage(RUSAGE_SELF, &r) != 0) return u;
  u.user_seconds = seconds(r.ru_utime);
  u.system_seconds = seconds(r.ru_stime);
  u.minor_faults = static_cast<std::uint64_t>(r.ru_minflt);
  u.major_faults = static_cast<std::uint64_t>(r.ru_majflt);
  return u;
}

ProcessUsage& ProcessUsage::operator+=(const ProcessUsage& other) {
  user_seconds += other.user_seconds;
  system_seconds += other.system_seconds;
  minor_faults += other.minor_faults;
  major_faults += other.major_faults;
  return *this;
}

ProcessUsage operator-(const ProcessUsage& later, const ProcessUsage& earlier) {
  ProcessUsage d;
  d.user_seconds = later.user_seconds - earlier.user_seconds;
  d.system_seconds = later.system_seconds - earlier.system_seconds;
  // Counters only grow within one process; a reading from another process reads as zero.
  d.minor_faults = later.minor_faults >= earlier.minor_faults ? later.minor_faults - earlier.minor_faults : 0;
  d.major_faults = later.major_faults >= earlier.major_faults ? later.major_faults - earlier.major_faults : 0;
  return d;
}

}  // namespace drift
