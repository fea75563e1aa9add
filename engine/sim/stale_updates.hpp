#pragma once
// Sync updates that missed their round's deadline under simulation.late_updates = "stale":
// kept until the first aggregation that ends after they arrive, which takes them in.
#include <cstdint>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/sim/sync_jobs.hpp"

namespace drift {

class StaleUpdates {
 public:
  void keep(StaleUpdate update) { kept_.push_back(std::move(update)); }

  // The kept updates that have arrived by `end`, in the order they were kept, each recorded in
  // `records` as a stale arrival `version - its model version` versions behind; the rest stay.
  std::vector<ClientUpdate> take_arrived(double end, std::uint64_t version, std::vector<ClientRecord>& records);

  void archive(StateArchive& ar);

 private:
  std::vector<StaleUpdate> kept_;
};

}  // namespace drift
