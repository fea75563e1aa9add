#include "engine/training/batch_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "engine/core/rng.hpp"
#include "engine/data/augment.hpp"
#include "engine/training/device_data.hpp"

namespace drift {

namespace {

std::vector<std::int64_t> shuffled_pass(const std::vector<std::int64_t>& indices, std::uint32_t client_id,
                                        std::uint32_t round, std::uint32_t pass, std::uint64_t seed) {
  auto order = indices;
  Rng rng = make_stream(seed, "batch-order", {client_id, round, pass});
  rng.shuffle(order);
  return order;
}

// local_steps: full batches from successive shuffled passes; a pass whose rest is shorter than a
// batch is left and a new one begins (FedAU's loader). A client holding fewer samples than a
// batch trains on all of them, reshuffled, at every step.
BatchSchedule step_schedule(const std::vector<std::int64_t>& indices, const HyperParams& hyper, std::uint32_t client_id,
                            std::uint32_t round, std::uint64_t seed) {
  BatchSchedule s;
  const auto n = static_cast<std::int64_t>(indices.size());
  if (n == 0) return s;
  const std::int64_t batch = std::min<std::int64_t>(hyper.batch_size, n);
  std::int64_t start = n;
  for (std::uint32_t step = 0; step < hyper.local_steps; ++step) {
    if (n - start < batch) {
      s.orders.push_back(shuffled_pass(indices, client_id, round, static_cast<std::uint32_t>(s.orders.size()), seed));
      start = 0;
    }
    const auto pass = static_cast<std::uint32_t>(s.orders.size() - 1);
    s.steps.push_back({pass, start, batch, static_cast<std::uint64_t>(start / batch)});
    start += batch;
  }
  return s;
}

// local_steps with a persistent pass: the client's passes are numbered from its first job on, each
// shuffled from ("persistent-pass", client, pass) and cut into floor(n / batch) full batches (the
// rest is left, as above; a client holding fewer samples than a batch takes all of them, so each
// of its steps is a pass). The job's first step is the one after the `steps_before` steps the
// client took in its earlier jobs.
BatchSchedule persistent_schedule(const std::vector<std::int64_t>& indices, const HyperParams& hyper,
                                  std::uint32_t client_id, std::uint64_t seed, std::uint64_t steps_before) {
  BatchSchedule s;
  const auto n = static_cast<std::int64_t>(indices.size());
  if (n == 0) return s;
  const std::int64_t batch = std::min<std::int64_t>(hyper.batch_size, n);
  const auto per_pass = static_cast<std::uint64_t>(n / batch);
  for (std::uint64_t step = steps_before; step < steps_before + hyper.local_steps; ++step) {
    const auto pass = step / per_pass;
    const auto number = step % per_pass;
    if (s.orders.empty() || number == 0) {
      auto order = indices;
      Rng rng = make_stream(seed, "persistent-pass", {client_id, pass});
      rng.shuffle(order);
      s.orders.push_back(std::move(order));
    }
    const auto epoch = static_cast<std::uint32_t>(s.orders.size() - 1);
    s.steps.push_back({epoch, static_cast<std::int64_t>(number) * batch, batch, number});
  }
  return s;
}

// The whole round's schedule.
BatchSchedule full_schedule(const std::vector<std::int64_t>& indices, const HyperParams& hyper, std::uint32_t client_id,
                            std::uint32_t round, std::uint64_t seed, std::uint64_t steps_before) {
  if (persistent_pass(hyper)) return persistent_schedule(indices, hyper, client_id, seed, steps_before);
  if (hyper.local_steps > 0) return step_schedule(indices, hyper, client_id, round, seed);
  BatchSchedule s;
  const auto n = static_cast<std::int64_t>(indices.size());
  const std::int64_t batch = hyper.batch_size;
  for (std::uint32_t epoch = 0; epoch < hyper.local_epochs; ++epoch) {
    s.orders.push_back(shuffled_pass(indices, client_id, round, epoch, seed));
    for (std::int64_t start = 0; start < n; start += batch) {
      const std::int64_t size = std::min(batch, n - start);
      if (hyper.drop_last && size < batch) break;
      s.steps.push_back({epoch, start, size, static_cast<std::uint64_t>(start / batch)});
    }
  }
  return s;
}

}  // namespace

// Partial work (hyper.max_steps) is the prefix of the whole round's schedule: the steps a
// client would have taken first.
BatchSchedule batch_schedule(const std::vector<std::int64_t>& indices, const HyperParams& hyper,
                             std::uint32_t client_id, std::uint32_t round, std::uint64_t seed,
                             std::uint64_t steps_before) {
  auto s = full_schedule(indices, hyper, client_id, round, seed, steps_before);
  if (hyper.max_steps > 0 && s.steps.size() > hyper.max_steps) {
    s.steps.resize(hyper.max_steps);
    s.orders.resize(s.steps.back().epoch + 1);  // passes it never reaches are not kept
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

namespace {
constexpr const char* kPassSteps = "pass/steps";  // a client state's scalar: steps taken under a persistent pass
}  // namespace

std::uint64_t pass_steps_before(const HyperParams& hyper, const Payload& state) {
  if (!persistent_pass(hyper)) return 0;
  const auto it = state.scalars.find(kPassSteps);
  if (it == state.scalars.end()) return 0;
  const double steps = it->second;
  if (!(steps >= 0.0 && steps < 9.0e15) || steps != std::floor(steps))
    throw std::invalid_argument("client state: a persistent pass's step count that is not a whole number");
  return static_cast<std::uint64_t>(it->second);
}

void record_pass_steps(const HyperParams& hyper, Payload& state, std::uint32_t steps) {
  if (!persistent_pass(hyper)) return;
  state.scalars[kPassSteps] = static_cast<double>(pass_steps_before(hyper, state) + steps);
}

}  // namespace drift
