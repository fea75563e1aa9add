#pragma once
// The batches of one client's local training: every epoch shuffles the client's samples from
// the ("batch-order", client, round, epoch) stream and cuts them into batches in that order.
// Under training.local_steps the passes are cut into full batches until the steps are taken.
// Unpacked and packed training both follow it, so a client sees the same batches either way.
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/data/dataset.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

struct BatchSchedule {
  struct Step {
    std::uint32_t epoch = 0;  // the pass over the client's data
    std::int64_t start = 0;   // offset into orders[epoch]
    std::int64_t size = 0;
    std::uint64_t number = 0;  // the batch's index within its epoch (the augmentation stream's key)
  };
  std::vector<std::vector<std::int64_t>> orders;  // per epoch: the client's samples, shuffled
  std::vector<Step> steps;

  const std::int64_t* indices(const Step& s) const { return orders[s.epoch].data() + s.start; }
};

// One step's images and labels on `device`, augmented (when `augment` is enabled) from the
// ("augment", client, round, epoch, batch) stream with `black` as the padding.
struct BatchSource {
  const Dataset* data = nullptr;
  torch::Device device = torch::kCPU;
  const AugmentConfig* augment = nullptr;
  torch::Tensor black;  // data->black() when augmenting
  std::uint64_t seed = 0;
  std::uint32_t round = 0;
};
std::pair<torch::Tensor, torch::Tensor> scheduled_batch(const BatchSource& source, const BatchSchedule& schedule,
                                                        const BatchSchedule::Step& step, std::uint32_t client_id);

// `steps_before`: under local_steps with a persistent pass (hyper.steps_pass), the steps the
// client took in its earlier jobs, which its state keeps (pass_steps_before); ignored otherwise.
BatchSchedule batch_schedule(const std::vector<std::int64_t>& indices, const HyperParams& hyper,
                             std::uint32_t client_id, std::uint32_t round, std::uint64_t seed,
                             std::uint64_t steps_before = 0);

// A persistent pass's place, in the client's state (a scalar, "pass/steps"): the steps it took
// in earlier jobs, 0 before its first one or when the pass is not persistent; and the state
// advanced by a job's `steps`. A count that is not a whole number throws std::invalid_argument.
std::uint64_t pass_steps_before(const HyperParams& hyper, const Payload& state);
void record_pass_steps(const HyperParams& hyper, Payload& state, std::uint32_t steps);

}  // namespace drift
