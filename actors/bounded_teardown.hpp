#pragma once
// Ending an actor system whose peers may be unreachable. CAF closes each connection gracefully:
// it first sends what is still buffered, and a peer behind a link that drops every packet never
// acknowledges it, so the kernel retransmits for its whole timeout (about 15 minutes) while the
// middleman's thread, and the process's exit, wait (docs/devices.md#faults-across-hosts).
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace drift::actors {

// Disconnects (abortively, keeping the descriptor valid for its owner) every TCP connection of
// this process that is not listening; with `only_stalled`, only those whose sent bytes are not
// all acknowledged. Returns how many it disconnected. Linux only; elsewhere it does nothing.
std::size_t abort_tcp_connections(bool only_stalled);

// While alive, a watch thread that waits `grace_s`, then aborts the stalled connections, then
// after as long again every connection left, telling `log` each time it acted. Destroying the
// guard (when the teardown it bounds has ended) stops the watch.
class BoundedTeardown {
 public:
  BoundedTeardown(double grace_s, std::function<void(const std::string&)> log);
  ~BoundedTeardown();
  BoundedTeardown(const BoundedTeardown&) = delete;
  BoundedTeardown& operator=(const BoundedTeardown&) = delete;

 private:
  void watch(double grace_s);

  std::function<void(const std::string&)> log_;
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread watcher_;
};

}  // namespace drift::actors
