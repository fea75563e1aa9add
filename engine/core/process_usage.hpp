#pragma once
// What the process has cost the machine so far (getrusage): CPU time in user space and in the
// kernel, and page faults. A round's cost is the difference of two readings. The kernel's
// share is the allocator's signature: a heap that hands memory back to the kernel after every
// batch faults it in again at the next one (docs/performance.md#the-allocator).
#include <cstdint>

namespace drift {

struct ProcessUsage {
  double user_seconds = 0.0;
  double system_seconds = 0.0;
  std::uint64_t minor_faults = 0;  // pages mapped in without a disk read: fresh heap pages
  std::uint64_t major_faults = 0;  // pages read from disk

  // This process, all its threads, now.
  static ProcessUsage now();
  ProcessUsage& operator+=(const ProcessUsage& other);
};

ProcessUsage operator-(const ProcessUsage& later, const ProcessUsage& earlier);

}  // namespace drift
