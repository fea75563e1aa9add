#include "engine/training/batch_schedule.hpp"

#include <algorithm>

#include "engine/core/rng.hpp"
#include "engine/data/augment.hpp"
#include "engine/training/device_data.hpp"

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

std::pair<torch::Tensor, torch::Tensor> scheduled_batch(const BatchSource& source, const BatchSchedule& schedule,
                                                        const BatchSchedule::Step& step, std::uint32_t client_id) {
  const auto& data = *source.data;
  const auto idx = indices_for(
      data, torch::from_blob(const_cast<std::int64_t*>(schedule.indices(step)), {step.size}, torch::kInt64));
  auto x = data.images.index_select(0, idx).to(source.device);
  auto y = data.labels.index_select(0, idx).to(source.device);
  if (source.augment != nullptr && source.augment->enabled()) {
    Rng draws = make_stream(source.seed, "augment", {client_id, source.round, step.epoch, step.number});
    x = augment_batch(x, *source.augment, source.black, draws);
  }
  return {x, y};
}

}  // namespace drift
