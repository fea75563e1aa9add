// Packed clients (devices.pack): a pack trains every member as train_locally would, up to
// float rounding, including members with fewer steps, and the decision to pack is the
// scenario's alone.
#include "catch_torch.hpp"

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/loader.hpp"
#include "engine/compose/packing.hpp"
#include "engine/core/error.hpp"
#include "engine/sim/job_loss.hpp"
#include "engine/sim/round_rules.hpp"
#include "engine/training/batch_schedule.hpp"
#include "engine/training/local_training.hpp"
#include "engine/training/pack_stepper.hpp"
#include "engine/training/packed_model.hpp"
#include "engine/training/packed_training.hpp"
#include "messages/pack_codec.hpp"
#include "training_fixtures.hpp"

using namespace drift;

namespace {

// Largest |packed - unpacked| over every tensor of every member, after checking that each
// member took exactly its own steps.
double largest_gap(const std::string& algorithm, const std::string& model_name, const std::vector<std::int64_t>& sizes,
                   double mu, std::uint32_t epochs = 2, std::uint32_t steps = 0, const PackOptions& pack = {}) {
  const auto f = testing::random_federation(sizes, 11);
  ModelOptions options;
  options.width = 8;
  auto model = make_model(model_name, {1, 28, 28}, 10, 5, options);
  auto task = testing::sgd_task(*model, 3, 0.05, epochs);
  task.hyper.local_steps = steps;
  const auto* info = find_algorithm(algorithm);
  ParamSet params;
  if (algorithm == "fedprox") params.set("mu", mu);
  std::vector<PackMember> members;
  for (std::uint32_t c = 0; c < sizes.size(); ++c) members.push_back({c, &f.indices[c]});
  const auto packed = train_packed(*model, PackedObjective{mu}, f.data, task, members, 42, torch::kCPU, {}, pack);

  double gap = 0;
  for (std::uint32_t c = 0; c < sizes.size(); ++c) {
    auto own = make_model(model_name, {1, 28, 28}, 10, 5, options);
    auto client = info->make_client(params);
    Payload state;
    const auto alone = train_locally(*own, *client, f.data, f.indices[c], task, c, state, 42);
    const auto& u = packed[c].update;
    REQUIRE(packed[c].error.empty());
    CHECK(u.client_id == c);
    CHECK(u.metrics.steps == alone.metrics.steps);
    CHECK(u.metrics.samples_seen == alone.metrics.samples_seen);
    CHECK(u.metrics.loss == Approx(alone.metrics.loss).epsilon(1e-3));
    REQUIRE(u.weights.size() == alone.weights.size());
    for (std::size_t t = 0; t < u.weights.size(); ++t) {
      REQUIRE(u.weights[t].name == alone.weights[t].name);
      gap = std::max(gap, (u.weights[t].value.to(torch::kDouble) - alone.weights[t].value.to(torch::kDouble))
                              .abs()
                              .max()
                              .item<double>());
    }
  }
  return gap;
}

}  // namespace

TEST_CASE("a pack trains each client as it trains alone", "[packing]") {
  // Sizes 40, 16, 21 and 3 with batches of 16: 3, 1, 2 and 1 steps per epoch, so members
  // leave the pack's steps at different times and last batches of 8, 5 and 3 step apart.
  const std::vector<std::int64_t> sizes{40, 16, 21, 3};
  // One epoch agrees to the last bits. Over more steps these models, on batches as small as 3
  // of random noise, turn last-bit differences between kernels into up to a few 1e-3: unpacked
  // training with 4 threads instead of 1 differs from itself by as much on this data, while a
  // member's result does not depend on its pack-mates at all (the next test case).
  SECTION("fedavg on small-cnn") {
    CHECK(largest_gap("fedavg", "small-cnn", sizes, 0, 1) < 1e-6);
    CHECK(largest_gap("fedavg", "small-cnn", sizes, 0, 2) < 5e-3);
  }
  SECTION("fedprox on small-cnn") {
    CHECK(largest_gap("fedprox", "small-cnn", sizes, 0.1, 1) < 1e-6);
    CHECK(largest_gap("fedprox", "small-cnn", sizes, 0.1, 2) < 5e-3);
  }
  SECTION("fedavg on resnet8, BatchNorm per client") {
    CHECK(largest_gap("fedavg", "resnet8", sizes, 0, 1) < 1e-6);
    CHECK(largest_gap("fedavg", "resnet8", sizes, 0, 2) < 5e-3);
  }
  SECTION("fedavg on cnn4") { CHECK(largest_gap("fedavg", "cnn4", {20, 7}, 0, 2) < 1e-5); }
  SECTION("fedavg-cnn's padding and resnet18's second blocks") {
    CHECK(largest_gap("fedavg", "fedavg-cnn", {20, 7}, 0, 1) < 1e-6);
    CHECK(largest_gap("fedavg", "resnet18", {20, 7}, 0, 1) < 1e-6);
  }
  SECTION("fedau-cnn's same-padded 3x3 convolutions, in local steps") {
    CHECK(largest_gap("fedavg", "fedau-cnn", {20, 7}, 0, 1) < 1e-6);
    CHECK(largest_gap("fedavg", "fedau-cnn", {40, 7, 0}, 0, 1, 3) < 1e-5);
  }
}

TEST_CASE("a padded pack, one shape at every step, trains each client as it trains alone", "[packing]") {
  // The GPU's way (PackOptions::pad_to), run here on the CPU: short last batches padded to 16
  // rows that weigh nothing, and members whose data has ended (3 of the 4 before the last
  // steps) resting, with momentum, weight decay and clipping that must leave them untouched.
  const std::vector<std::int64_t> sizes{40, 16, 21, 3};
  PackOptions pad;
  pad.pad_to = 16;
  SECTION("fedavg and fedprox on small-cnn") {
    CHECK(largest_gap("fedavg", "small-cnn", sizes, 0, 1, 0, pad) < 1e-6);
    CHECK(largest_gap("fedprox", "small-cnn", sizes, 0.1, 1, 0, pad) < 1e-6);
    CHECK(largest_gap("fedprox", "small-cnn", sizes, 0.1, 2, 0, pad) < 5e-3);
  }
  SECTION("fedau-cnn in local steps, with a member without samples") {
    CHECK(largest_gap("fedavg", "fedau-cnn", {40, 7, 0}, 0, 1, 3, pad) < 1e-5);
  }
  SECTION("padding to more rows than any batch has") {
    pad.pad_to = 24;
    CHECK(largest_gap("fedavg", "cnn4", sizes, 0, 1, 0, pad) < 1e-6);
  }
}

TEST_CASE("a padded pack keeps what it cannot pad in size groups", "[packing]") {
  auto f = testing::random_federation({40, 16, 21, 3}, 5);
  ModelOptions options;
  options.width = 8;
  std::vector<PackMember> members;
  for (std::uint32_t c = 0; c < 4; ++c) members.push_back({c, &f.indices[c]});
  PackOptions pad;
  pad.pad_to = 16;
  auto same = [](const std::vector<PackOutcome>& a, const std::vector<PackOutcome>& b) {
    for (std::size_t c = 0; c < a.size(); ++c)
      for (std::size_t t = 0; t < a[c].update.weights.size(); ++t)
        if (!torch::equal(a[c].update.weights[t].value, b[c].update.weights[t].value)) return false;
    return true;
  };
  // BatchNorm would see the padding rows: the ResNets step in size groups, to the bit.
  auto resnet = make_model("resnet8", {1, 28, 28}, 10, 5, options);
  const auto task = testing::sgd_task(*resnet, 3, 0.05, 1);
  CHECK(same(train_packed(*resnet, {}, f.data, task, members, 7),
             train_packed(*resnet, {}, f.data, task, members, 7, torch::kCPU, {}, pad)));
  // A batch larger than the padding: size groups too.
  auto cnn = make_model("small-cnn", {1, 28, 28}, 10, 5, options);
  auto wide = testing::sgd_task(*cnn, 3, 0.05, 1);
  wide.hyper.batch_size = 32;
  CHECK(same(train_packed(*cnn, {}, f.data, wide, members, 7),
             train_packed(*cnn, {}, f.data, wide, members, 7, torch::kCPU, {}, pad)));
  // Where it pads, it is another arithmetic (a run's identity on the GPU, as the pack size is).
  CHECK_FALSE(
      same(train_packed(*cnn, {}, f.data, testing::sgd_task(*cnn, 3, 0.05, 1), members, 7),
           train_packed(*cnn, {}, f.data, testing::sgd_task(*cnn, 3, 0.05, 1), members, 7, torch::kCPU, {}, pad)));
}

TEST_CASE("a slot's pack stepper, job after job, gives train_packed's bits", "[packing]") {
  // The GPU's PackStepper keeps its packs' tensors from job to job (here on the CPU, eagerly):
  // a job must inherit nothing from the one before, whatever its pack size, weights and
  // learning rate.
  auto f = testing::random_federation({40, 16, 21, 3, 30}, 8);
  ModelOptions options;
  options.width = 8;
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 5, options);
  PackStepper stepper(torch::kCPU, true);
  PackOptions pad;
  pad.pad_to = 16;
  const PackedObjective objective{0.05};
  const std::vector<std::vector<std::uint32_t>> packs{{0, 1, 2, 3}, {4, 2, 0}, {1, 3, 4, 0}, {2, 1, 0, 4}};
  std::uint32_t round = 1;
  for (const auto& clients : packs) {
    INFO("round " << round);
    auto task = testing::sgd_task(*model, round, 0.05 / round, 2);
    for (auto& t : task.weights) t.value = t.value + 0.01 * static_cast<double>(round);  // another global model
    std::vector<PackMember> members;
    for (auto c : clients) members.push_back({c, &f.indices[c]});
    const auto fresh = train_packed(*model, objective, f.data, task, members, 42, torch::kCPU, {}, pad);
    const auto kept = stepper.train(*model, objective, f.data, task, members, 42, {}, pad);
    REQUIRE(kept.size() == fresh.size());
    for (std::size_t m = 0; m < kept.size(); ++m) {
      CHECK(kept[m].update.metrics.loss == fresh[m].update.metrics.loss);
      CHECK(kept[m].update.metrics.accuracy == fresh[m].update.metrics.accuracy);
      for (std::size_t t = 0; t < kept[m].update.weights.size(); ++t)
        CHECK(torch::equal(kept[m].update.weights[t].value, fresh[m].update.weights[t].value));
    }
    ++round;
  }
  CHECK(stepper.counters().eager_steps > 0);
  CHECK(stepper.counters().replayed_steps == 0);  // no graphs on the CPU
  // A ResNet (BatchNorm) cannot be padded: its pack runs as train_packed's size groups.
  const auto steps_before = stepper.counters().eager_steps;
  auto resnet = make_model("resnet8", {1, 28, 28}, 10, 5, options);
  const auto resnet_task = testing::sgd_task(*resnet, 5, 0.05, 1);
  std::vector<PackMember> four;
  for (std::uint32_t c : {0, 1, 2, 3}) four.push_back({c, &f.indices[c]});
  const auto grouped = train_packed(*resnet, objective, f.data, resnet_task, four, 42, torch::kCPU, {}, pad);
  const auto through = stepper.train(*resnet, objective, f.data, resnet_task, four, 42, {}, pad);
  for (std::size_t m = 0; m < four.size(); ++m)
    for (std::size_t t = 0; t < grouped[m].update.weights.size(); ++t)
      CHECK(torch::equal(grouped[m].update.weights[t].value, through[m].update.weights[t].value));
  CHECK(stepper.counters().eager_steps == steps_before);
  // A member that diverges in a later job is told the step of that job.
  f.data.images.slice(0, 0, 40).fill_(std::numeric_limits<float>::quiet_NaN());  // client 0's samples
  const auto task = testing::sgd_task(*model, 9, 0.05, 1);
  std::vector<PackMember> members;
  for (std::uint32_t c : {4, 0, 1}) members.push_back({c, &f.indices[c]});
  const auto broken = stepper.train(*model, objective, f.data, task, members, 42, {}, pad);
  INFO(broken[1].error);
  CHECK(broken[1].error.find("client 0 round 9: training loss became") != std::string::npos);
  CHECK(broken[1].error.find("nan at local step 0") != std::string::npos);
  CHECK(broken[0].error.empty());
  CHECK(broken[2].error.empty());
}

TEST_CASE("a member's result does not depend on its pack-mates", "[packing]") {
  auto f = testing::random_federation({40, 16, 21, 3}, 11);
  auto others = f.data;
  others.images = f.data.images.clone();
  others.images.slice(0, 40).add_(torch::randn_like(others.images.slice(0, 40)));  // clients 1-3's samples
  ModelOptions options;
  options.width = 8;
  for (const auto* name : {"small-cnn", "resnet8"}) {
    auto model = make_model(name, {1, 28, 28}, 10, 5, options);
    const auto task = testing::sgd_task(*model, 3, 0.05, 2);
    std::vector<PackMember> members;
    for (std::uint32_t c = 0; c < 4; ++c) members.push_back({c, &f.indices[c]});
    for (std::int64_t pad_to : {0, 16}) {
      INFO(name << ", padded to " << pad_to);
      PackOptions pack;
      pack.pad_to = pad_to;
      const auto a = train_packed(*model, {}, f.data, task, members, 42, torch::kCPU, {}, pack);
      const auto b = train_packed(*model, {}, others, task, members, 42, torch::kCPU, {}, pack);
      for (std::size_t t = 0; t < a[0].update.weights.size(); ++t)
        CHECK(torch::equal(a[0].update.weights[t].value, b[0].update.weights[t].value));
      CHECK_FALSE(torch::equal(a[1].update.weights[0].value, b[1].update.weights[0].value));
    }
  }
}

TEST_CASE("a pack gives the same bits on a rerun and fails only a diverging member", "[packing]") {
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 5);
  const auto task = testing::sgd_task(*model, 3, 0.05, 1);
  for (std::int64_t pad_to : {0, 16}) {
    INFO("padded to " << pad_to);
    PackOptions pack;
    pack.pad_to = pad_to;
    auto f = testing::random_federation({20, 20, 20}, 3);
    std::vector<PackMember> members;
    for (std::uint32_t c = 0; c < 3; ++c) members.push_back({c, &f.indices[c]});
    const auto a = train_packed(*model, {}, f.data, task, members, 9, torch::kCPU, {}, pack);
    const auto b = train_packed(*model, {}, f.data, task, members, 9, torch::kCPU, {}, pack);
    for (std::size_t c = 0; c < 3; ++c)
      for (std::size_t t = 0; t < a[c].update.weights.size(); ++t)
        CHECK(torch::equal(a[c].update.weights[t].value, b[c].update.weights[t].value));

    f.data.images[25].fill_(std::numeric_limits<float>::quiet_NaN());  // a sample of client 1
    const auto broken = train_packed(*model, {}, f.data, task, members, 9, torch::kCPU, {}, pack);
    INFO(broken[1].error);
    CHECK(broken[1].error.find("client 1 round 3: training loss became") != std::string::npos);
    CHECK(broken[1].error.find("nan at local step 0") != std::string::npos);
    for (std::size_t c : {0, 2}) {
      REQUIRE(broken[c].error.empty());
      CHECK(broken[c].update.metrics.loss == a[c].update.metrics.loss);
      for (std::size_t t = 0; t < a[c].update.weights.size(); ++t)
        CHECK(torch::equal(a[c].update.weights[t].value, broken[c].update.weights[t].value));
    }
  }
}

TEST_CASE("the batch schedule follows the client's own stream", "[packing]") {
  HyperParams hp;
  hp.batch_size = 4;
  hp.local_epochs = 2;
  const std::vector<std::int64_t> indices{7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const auto s = batch_schedule(indices, hp, 3, 1, 5);
  REQUIRE(s.steps.size() == 6);  // 4 + 4 + 2, twice
  CHECK(s.steps[2].size == 2);
  CHECK(s.steps[3].epoch == 1);
  CHECK(s.steps[5].number == 2);
  CHECK(s.orders[0] != s.orders[1]);
  CHECK(batch_schedule(indices, hp, 3, 1, 5).orders == s.orders);
  CHECK(batch_schedule(indices, hp, 4, 1, 5).orders != s.orders);
  hp.drop_last = true;
  CHECK(batch_schedule(indices, hp, 3, 1, 5).steps.size() == 4);
}

TEST_CASE("local steps take full batches from passes reshuffled as they run out", "[packing]") {
  HyperParams hp;
  hp.batch_size = 4;
  hp.local_steps = 5;
  hp.local_epochs = 7;  // ignored under local_steps
  hp.drop_last = false;
  const std::vector<std::int64_t> indices{7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const auto s = batch_schedule(indices, hp, 3, 1, 5);
  // 10 samples in batches of 4: two batches a pass, the last 2 samples left, a new pass.
  REQUIRE(s.steps.size() == 5);
  REQUIRE(s.orders.size() == 3);
  const std::vector<std::uint32_t> passes{0, 0, 1, 1, 2};
  const std::vector<std::int64_t> starts{0, 4, 0, 4, 0};
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(s.steps[i].epoch == passes[i]);
    CHECK(s.steps[i].start == starts[i]);
    CHECK(s.steps[i].size == 4);
    CHECK(s.steps[i].number == static_cast<std::uint64_t>(starts[i] / 4));
  }
  // Pass k is shuffled as epoch k would be.
  HyperParams epochs;
  epochs.batch_size = 4;
  epochs.local_epochs = 3;
  CHECK(batch_schedule(indices, epochs, 3, 1, 5).orders == s.orders);

  // Fewer samples than a batch: all of them, reshuffled, at every step.
  const auto small = batch_schedule({1, 2, 3}, hp, 3, 1, 5);
  REQUIRE(small.steps.size() == 5);
  CHECK(small.orders.size() == 5);
  for (const auto& step : small.steps) CHECK(step.size == 3);
  CHECK(batch_schedule({}, hp, 3, 1, 5).steps.empty());

  // The virtual time's compute counts the samples the steps go through.
  hp.batch_size = 16;
  CHECK(local_samples_per_round(hp, 100) == 80.0);
  CHECK(local_samples_per_round(hp, 3) == 15.0);
  hp.local_steps = 0;
  CHECK(local_samples_per_round(hp, 100) == 700.0);
}

TEST_CASE("the last local epoch under local steps is the last pass begun", "[packing]") {
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 5);
  auto task = testing::sgd_task(*model, 3, 0.05, 3);
  Payload state;
  ClientContext ctx{0, task, state, *model};
  ctx.epoch = 2;
  CHECK(in_last_local_epoch(ctx));
  task.hyper.local_steps = 5;
  ctx.last_epoch = 4;
  CHECK_FALSE(in_last_local_epoch(ctx));
  ctx.epoch = 4;
  CHECK(in_last_local_epoch(ctx));
}

TEST_CASE("which scenarios pack is the scenario's choice", "[packing][scenario]") {
  const std::string base = "name = \"p\"\n[federation]\nclients = 4\n[devices]\npack = 4\n";
  auto load = [&](const std::string& extra) { return parse_scenario(base + extra, "test"); };
  CHECK(effective_pack(load("[algorithm]\nname = \"fedavg\"\n")) == 4);
  CHECK(effective_pack(load("[algorithm]\nname = \"fedprox\"\n[model]\nname = \"resnet8\"\n")) == 4);
  const auto skc = load("[algorithm]\nname = \"fedskc\"\n");
  CHECK(effective_pack(skc) == 1);
  CHECK(pack_refusal(skc).find("fedskc does not pack") != std::string::npos);
  bool warned = false;
  for (const auto& w : skc.warnings) warned |= w.find("devices.pack does nothing here") != std::string::npos;
  CHECK(warned);
  const auto mobile = load("[model]\nname = \"mobilenetv2\"\n");
  CHECK(pack_refusal(mobile).find("model 'mobilenetv2' does not pack") != std::string::npos);
  CHECK_THROWS_WITH(load("[simulation]\nmode = \"fedbuff\"\n"),
                    Catch::Contains("devices.pack needs simulation.mode = sync"));
  CHECK_THROWS_WITH(parse_scenario("name = \"p\"\n[devices]\npack = 0\n", "test"), Catch::Contains("pack"));
}

TEST_CASE("a model packs as its row says, whatever its name", "[packing]") {
  // A plugin's rows: one named like the built-in ResNets without claiming a layout, one
  // claiming the two-convolution layout for a module that is a ResNet.
  static const bool registered = [] {
    auto named_resnet = *find_model("resnet8");
    named_resnet.name = "resnet-plugin";
    named_resnet.packs = PackedLayout::none;
    register_model(named_resnet);
    auto claims = *find_model("resnet8");
    claims.name = "claims-two-conv";
    claims.packs = PackedLayout::two_conv;
    register_model(claims);
    return true;
  }();
  REQUIRE(registered);
  CHECK(packing_refusal("resnet-plugin", {}).find("does not pack") != std::string::npos);
  CHECK(packing_refusal("resnet8", {}).empty());
  ModelOptions options;
  options.width = 8;
  const auto claims = make_model("claims-two-conv", {1, 28, 28}, 10, 5, options);
  CHECK_THROWS_WITH(PackedModel(*claims, state_of(*claims), 2, torch::kCPU),
                    Catch::Contains("claims a packed layout its module lacks"));
  const auto resnet = make_model("resnet8", {1, 28, 28}, 10, 5, options);
  CHECK_NOTHROW(PackedModel(*resnet, state_of(*resnet), 2, torch::kCPU));
}

TEST_CASE("pack messages round-trip and refuse what cannot be", "[packing][codec]") {
  CHECK(msg::decode_pack_job(msg::encode_pack_job({5, 2, 9})) == std::vector<std::uint32_t>{5, 2, 9});
  CHECK_THROWS_WITH(msg::decode_pack_job(msg::encode_pack_job({})), Catch::Contains("without clients"));
  CHECK_THROWS_WITH(msg::decode_pack_job(msg::encode_pack_job({1, 1})), Catch::Contains("twice"));
  const msg::Buffer update(std::vector<char>(24, 'x'));
  const auto back = msg::decode_pack_result(msg::encode_pack_result({{5, update, ""}, {2, {}, "loss became nan"}}));
  REQUIRE(back.size() == 2);
  CHECK(back[0].client == 5);
  CHECK(back[0].update.bytes() == update.bytes());
  CHECK(back[1].error == "loss became nan");
  CHECK(back[1].update.empty());
  CHECK_THROWS_WITH(msg::decode_pack_result(msg::encode_pack_result({{1, {}, ""}})), Catch::Contains("neither"));
  CHECK_THROWS_WITH(msg::decode_pack_result(msg::encode_pack_result({{1, update, "x"}})), Catch::Contains("both"));
}

TEST_CASE("a round's jobs go in consecutive packs, a lone last job alone", "[packing]") {
  using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;
  CHECK(pack_ranges(7, 3) == Ranges{{0, 3}, {3, 6}, {6, 7}});
  CHECK(pack_ranges(6, 3) == Ranges{{0, 3}, {3, 6}});
  CHECK(pack_ranges(2, 1) == Ranges{{0, 1}, {1, 2}});
  CHECK(pack_ranges(2, 8) == Ranges{{0, 2}});
  CHECK(pack_ranges(0, 4).empty());
}

TEST_CASE("a job given back: a lost worker's evaluation runs again, no slot ends the run", "[packing]") {
  CHECK(training_loss_ends_run(JobLoss::no_slots));
  CHECK_FALSE(training_loss_ends_run(JobLoss::worker_lost));
  CHECK_FALSE(training_loss_ends_run(JobLoss::error));
  CHECK(evaluation_runs_again(JobLoss::worker_lost));
  CHECK_FALSE(evaluation_runs_again(JobLoss::error));
  CHECK(evaluation_failure(JobLoss::error, "bad reply") == "evaluation failed: bad reply");
  CHECK(evaluation_failure(JobLoss::no_slots, "no trainer slot remains") == "no trainer slot remains");
}
