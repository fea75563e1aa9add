#pragma once
// The workers a run lost (a process that died, a link that broke, a worker that stopped
// answering), for summary.json: a record of the deployment beside wall_seconds, as a run's
// clients.csv says which clients dropped out because of it. Written by the device pool's
// thread, read when the run ends.
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace drift {

class WorkerLosses {
 public:
  void add(std::string what) {
    std::lock_guard lock(mutex_);
    lost_.push_back(std::move(what));
  }
  std::vector<std::string> list() const {
    std::lock_guard lock(mutex_);
    return lost_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lost_;
};

}  // namespace drift
