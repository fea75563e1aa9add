// training.local_steps_pass = "persistent" (docs/scenarios.md#local-steps): a client's shuffled
// pass runs on across its jobs, as FedAU's loader does, with its place kept in its state.
#include "catch_torch.hpp"

#include "engine/algorithms/algorithm.hpp"
#include "engine/training/batch_schedule.hpp"
#include "engine/training/device_trainer.hpp"
#include "engine/training/local_training.hpp"
#include "messages/codec.hpp"
#include "training_fixtures.hpp"

using namespace drift;
using namespace drift::testing;

namespace {

HyperParams persistent(std::uint32_t steps) {
  HyperParams hp;
  hp.batch_size = 4;
  hp.local_steps = steps;
  hp.steps_pass = StepsPass::persistent;
  return hp;
}

// Each step's sample indices, in order.
std::vector<std::vector<std::int64_t>> batches(const BatchSchedule& s) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& step : s.steps) out.emplace_back(s.indices(step), s.indices(step) + step.size);
  return out;
}

const std::vector<std::int64_t> kTen{7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

}  // namespace

TEST_CASE("a persistent pass starts where the client's earlier steps left it", "[persistent_pass]") {
  // 10 samples in batches of 4: two batches a pass (2 samples left over). After 3 steps the
  // client is at pass 1, batch 1; 4 more steps: (1, 1), (2, 0), (2, 1), (3, 0).
  const auto s = batch_schedule(kTen, persistent(4), 3, 9, 5, 3);
  REQUIRE(s.steps.size() == 4);
  REQUIRE(s.orders.size() == 3);
  const std::vector<std::uint32_t> pass{0, 1, 1, 2};
  const std::vector<std::int64_t> start{4, 0, 4, 0};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(s.steps[i].epoch == pass[i]);
    CHECK(s.steps[i].start == start[i]);
    CHECK(s.steps[i].size == 4);
    CHECK(s.steps[i].number == static_cast<std::uint64_t>(start[i] / 4));
  }
  // Pass 1's order is the one a job that began it used, whatever the round.
  const auto earlier = batch_schedule(kTen, persistent(1), 3, 2, 5, 2);
  CHECK(earlier.orders.at(0) == s.orders.at(0));
  CHECK(s.orders[0] != s.orders[1]);
  CHECK(batch_schedule(kTen, persistent(4), 4, 9, 5, 3).orders != s.orders);  // the client's own stream
}

TEST_CASE("jobs on a persistent pass take the batches of one long job", "[persistent_pass]") {
  const auto whole = batches(batch_schedule(kTen, persistent(9), 3, 1, 5, 0));
  std::vector<std::vector<std::int64_t>> pieces;
  std::uint64_t done = 0;
  for (std::uint32_t steps : {2, 3, 1, 3}) {
    for (auto& b : batches(batch_schedule(kTen, persistent(steps), 3, 1 + done, 5, done))) pieces.push_back(b);
    done += steps;
  }
  CHECK(pieces == whole);
  // Fewer samples than a batch: each step is a pass of all of them, reshuffled.
  const auto small = batch_schedule({1, 2, 3}, persistent(3), 3, 1, 5, 4);
  REQUIRE(small.orders.size() == 3);
  for (const auto& step : small.steps) CHECK((step.size == 3 && step.start == 0));
  CHECK(small.orders[0] != small.orders[1]);
  // A fresh pass ignores the count.
  auto fresh = persistent(3);
  fresh.steps_pass = StepsPass::fresh;
  CHECK(batch_schedule(kTen, fresh, 3, 1, 5, 7).orders == batch_schedule(kTen, fresh, 3, 1, 5, 0).orders);
}

TEST_CASE("a client's state keeps its place in a persistent pass", "[persistent_pass]") {
  const auto hp = persistent(3);
  Payload state;
  CHECK(pass_steps_before(hp, state) == 0);
  record_pass_steps(hp, state, 3);
  record_pass_steps(hp, state, 2);
  CHECK(pass_steps_before(hp, state) == 5);
  auto fresh = hp;
  fresh.steps_pass = StepsPass::fresh;
  CHECK(pass_steps_before(fresh, state) == 0);
  Payload untouched;
  record_pass_steps(fresh, untouched, 3);
  CHECK(untouched.empty());
  for (double bad : {-1.0, 2.5, std::nan("")}) {
    Payload broken;
    broken.scalars["pass/steps"] = bad;
    CHECK_THROWS_WITH(pass_steps_before(hp, broken), Catch::Contains("not a whole number"));
  }
}

TEST_CASE("training on a persistent pass advances the client's state", "[persistent_pass]") {
  const auto f = random_federation({40}, 2);
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 5);
  auto other = make_model("small-cnn", {1, 28, 28}, 10, 5);
  auto task = sgd_task(*model, 1, 0.05, 1);
  task.hyper.local_steps = 3;
  task.hyper.steps_pass = StepsPass::persistent;
  // The trainers GPU slots and CPU slots run agree on the place, and on the batches.
  DeviceTrainer trainer(*other, torch::kCPU, {});
  const PackedObjective objective{};
  auto client = find_algorithm("fedavg")->make_client(ParamSet{});
  Payload a, b;
  for (std::uint32_t round = 1; round <= 2; ++round) {
    task.round = round;
    const auto one = train_locally(*model, *client, f.data, f.indices[0], task, 0, a, 42);
    const auto two = trainer.train(*client, &objective, f.data, f.indices[0], task, 0, b, 42);
    CHECK(weight_gap(one.weights, two.weights) < 1e-6);
  }
  CHECK(pass_steps_before(task.hyper, a) == 6);
  CHECK(pass_steps_before(task.hyper, b) == 6);
  // The task carries the choice.
  CHECK(msg::decode_task(msg::encode_task(task)).hyper.steps_pass == StepsPass::persistent);
}
