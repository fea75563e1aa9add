#include "engine/sim/stale_updates.hpp"

#include "engine/tensors/tensor_archive.hpp"

namespace drift {

std::vector<ClientUpdate> StaleUpdates::take_arrived(double end, std::uint64_t version,
                                                     std::vector<ClientRecord>& records) {
  std::vector<ClientUpdate> arrived;
  std::vector<StaleUpdate> waiting;
  for (auto& s : kept_) {
    if (s.arrival > end) {
      waiting.push_back(std::move(s));
      continue;
    }
    const auto& u = s.update;
    records.push_back(arrival_record(ClientEvent::stale, u.client_id, s.arrival, u.num_samples, u.metrics.steps,
                                     u.metrics.loss, s.bytes, version - u.model_version, ""));
    arrived.push_back(std::move(s.update));
  }
  kept_ = std::move(waiting);
  return arrived;
}

void StaleUpdates::archive(StateArchive& ar) {
  ar.vector(kept_, [&](StaleUpdate& s) {
    ar.value(s.arrival);
    archive_update(ar, s.update);
    ar.value(s.bytes);
  });
}

}  // namespace drift
