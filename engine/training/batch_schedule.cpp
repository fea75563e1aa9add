#include "engine/training/batch_schedule.hpp"

#include <algorithm>

#include "engine/core/rng.hpp"

namespace drift {

BatchSchedule batch_schedule(const std::vector<std::int64_t>& indices, const HyperParams& hyper,
                             std::uint32_t client_id, std::uint32_t round, std::uint64_t seed) {
  BatchSchedule s;
  const auto n = static_cast<std::int64_t>(indices.size());
  const std::int64_t batch = hyper.batch_size;
  for (std::uint32_t epoch = 0; epoch < hyper.local_epochs; ++epoch) {
    auto order = indices;
    Rng rng = make_stream(seed, "batch-order", {client_id, round, epoch});
    rng.shuffle(order);
    s.orders.push_back(std::move(order));
    for (std::int64_t start = 0; start < n; start += batch) {
      const std::int64_t size = std::min(batch, n - start);
      if (hyper.drop_last && size < batch) break;
      s.steps.push_back({epoch, start, size, static_cast<std::uint64_t>(start / batch)});
    }
  }
  return s;
}

}  // namespace drift
