#include "catch_torch.hpp"

#include <cmath>
#include <cstring>

#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/models/model.hpp"
#include "messages/codec.hpp"
#include "messages/selection_codec.hpp"

using namespace drift;

namespace {

TrainingTask sample_task() {
  TrainingTask task;
  task.round = 7;
  task.model_version = 6;
  task.weights = {{"w", torch::arange(12, torch::kFloat32).reshape({3, 4})},
                  {"b", torch::tensor({1.5, -2.5}, torch::kFloat64)},
                  {"steps", torch::tensor({42}, torch::kInt64)},
                  {"empty", torch::zeros({0, 5})}};
  task.payload.tensors["control"] = torch::ones({2, 2});
  task.payload.class_vectors["prototypes"][3] = torch::full({2, 4}, 0.25);
  task.payload.class_vectors["prototypes"][9] = torch::full({1, 4}, -1.0);
  task.payload.scalars["temperature"] = 0.08;
  task.hyper.learning_rate = 0.01;
  task.hyper.momentum = 0.9;
  task.hyper.weight_decay = 1e-5;
  task.hyper.local_epochs = 3;
  task.hyper.batch_size = 32;
  task.hyper.drop_last = true;
  return task;
}

// A copy of `b` with its bytes altered by `edit`.
msg::Buffer edited(const msg::Buffer& b, const std::function<void(std::vector<char>&)>& edit) {
  auto bytes = b.bytes();
  edit(bytes);
  return msg::Buffer(std::move(bytes));
}

// Offset of the first occurrence of `needle` in the buffer.
std::size_t find_bytes(const msg::Buffer& b, const void* needle, std::size_t n) {
  const auto& bytes = b.bytes();
  for (std::size_t i = 0; i + n <= bytes.size(); ++i)
    if (std::memcmp(bytes.data() + i, needle, n) == 0) return i;
  FAIL("pattern not found");
  return 0;
}

}  // namespace

TEST_CASE("a training task survives a round trip", "[codec]") {
  const auto task = sample_task();
  const auto decoded = msg::decode_task(msg::encode_task(task));
  CHECK(decoded.round == 7);
  CHECK(decoded.model_version == 6);
  REQUIRE(decoded.weights.size() == task.weights.size());
  for (std::size_t i = 0; i < task.weights.size(); ++i) {
    CHECK(decoded.weights[i].name == task.weights[i].name);
    CHECK(decoded.weights[i].value.scalar_type() == task.weights[i].value.scalar_type());
    CHECK(decoded.weights[i].value.sizes() == task.weights[i].value.sizes());
    CHECK(torch::equal(decoded.weights[i].value, task.weights[i].value));
  }
  CHECK(torch::equal(decoded.payload.tensors.at("control"), torch::ones({2, 2})));
  CHECK(decoded.payload.class_vectors.at("prototypes").size() == 2);
  CHECK(torch::equal(decoded.payload.class_vectors.at("prototypes").at(9), torch::full({1, 4}, -1.0)));
  CHECK(decoded.payload.scalars.at("temperature") == 0.08);
  CHECK(decoded.hyper.learning_rate == 0.01);
  CHECK(decoded.hyper.momentum == 0.9);
  CHECK(decoded.hyper.weight_decay == 1e-5);
  CHECK(decoded.hyper.local_epochs == 3);
  CHECK(decoded.hyper.batch_size == 32);
  CHECK(decoded.hyper.drop_last);
}

TEST_CASE("a client update and the small control messages survive a round trip", "[codec]") {
  ClientUpdate u;
  u.client_id = 12;
  u.round = 3;
  u.model_version = 2;
  u.num_samples = 1234;
  u.weights = {{"fc.weight", torch::randn({5, 3})}};
  u.metrics = {0.5, 0.75, 19, 1216};
  const auto d = msg::decode_update(msg::encode_update(u));
  CHECK(d.client_id == 12);
  CHECK(d.round == 3);
  CHECK(d.model_version == 2);
  CHECK(d.num_samples == 1234);
  CHECK(torch::equal(d.weights[0].value, u.weights[0].value));
  CHECK(d.metrics.loss == 0.5);
  CHECK(d.metrics.accuracy == 0.75);
  CHECK(d.metrics.steps == 19);
  CHECK(d.metrics.samples_seen == 1216);

  EvalResult r{0, 10, 3.5, {1, 2}, {5, 5}};
  const auto e = msg::decode_eval_result(msg::encode_eval_result(r));
  CHECK(e.end == 10);
  CHECK(e.loss_sum == 3.5);
  CHECK(e.correct == std::vector<std::uint64_t>{1, 2});
  CHECK(e.hits.empty());
  // Per-sample hits (evaluation.per_client) travel beside the counts, one byte a sample.
  r.hits = {1, 0, 1, 1, 0, 0, 1, 0, 0, 0};
  CHECK(msg::decode_eval_result(msg::encode_eval_result(r)).hits == r.hits);
  r.hits.pop_back();
  CHECK_THROWS_WITH(msg::decode_eval_result(msg::encode_eval_result(r)), Catch::Contains("do not cover"));
  r.hits.push_back(2);
  CHECK_THROWS_WITH(msg::decode_eval_result(msg::encode_eval_result(r)), Catch::Contains("neither 0 nor 1"));
  const EvalJob job{7, 0, 10, true};
  CHECK(msg::decode_eval_job(msg::encode_eval_job(job)).per_sample);

  RoundReport report;
  report.round = 2;
  report.cohort = {3, 4};
  report.per_class_accuracy = {0.5, 1.0};
  report.clients = {arrival_record(ClientEvent::stale, 3, 12.5, 40, 6, 0.25, 10, 2, "nan loss")};
  report.time_end = 99.25;
  report.staleness = {0, 3};
  report.window_js = 0.125;
  const auto rr = msg::decode_report(msg::encode_report(report));
  CHECK(rr.cohort == report.cohort);
  CHECK(rr.time_end == 99.25);
  CHECK(rr.staleness == report.staleness);
  CHECK(rr.window_js == 0.125);
  CHECK(rr.clients.at(0).time == 12.5);
  CHECK(rr.clients.at(0).staleness == 2u);
  CHECK(rr.per_class_accuracy == report.per_class_accuracy);
  CHECK(rr.clients.at(0).detail == "nan loss");
  CHECK(rr.clients.at(0).event == ClientEvent::stale);
  CHECK(rr.clients.at(0).num_samples == 40u);
  CHECK(rr.clients.at(0).bytes_up == 10u);
}

TEST_CASE("the selection messages survive a round trip and refuse what the sampler cannot use", "[codec][sampler]") {
  Selection selection;
  selection.round = 4;
  selection.clients = {9, 1, 5};  // the order drawn is kept
  selection.cohort_size = 3;
  selection.eligible = 40;
  const auto sel = msg::decode_selection(msg::encode_selection(selection));
  CHECK(sel.round == 4);
  CHECK(sel.clients == std::vector<std::uint32_t>{9, 1, 5});
  CHECK(sel.cohort_size == 3);
  CHECK(sel.eligible == 40);

  SelectionRequest request;
  request.round = 17;
  request.time = 12.5;
  request.slots = 3;
  request.over_selection = 1.25;
  request.busy = {2, 7};
  request.losses = {{7, 0.5}, {2, std::nan("")}};
  request.timeline = {{1, 10.0}};
  const auto req = msg::decode_selection_request(msg::encode_selection_request(request));
  CHECK(req.round == 17);
  CHECK(req.time == 12.5);
  CHECK(req.slots == 3);
  CHECK(req.over_selection == 1.25);
  CHECK(req.busy == request.busy);
  REQUIRE(req.losses.size() == 2);
  CHECK(req.losses[0].client == 7);
  CHECK(req.losses[0].loss == 0.5);
  CHECK(std::isnan(req.losses[1].loss));
  REQUIRE(req.timeline.size() == 1);
  CHECK(req.timeline[0].index == 1);
  CHECK(req.timeline[0].time == 10.0);
  request.busy = {7, 2};
  CHECK_THROWS_WITH(msg::decode_selection_request(msg::encode_selection_request(request)),
                    Catch::Contains("out of order"));
  request.busy = {2, 7};
  request.time = std::nan("");
  CHECK_THROWS_AS(msg::decode_selection_request(msg::encode_selection_request(request)), DecodeError);
}

TEST_CASE("decoding aliases the buffer instead of copying tensors", "[codec]") {
  NamedTensors weights = {{"big", torch::randn({256, 256})}};
  const auto buffer = msg::encode_bundle(weights);
  const auto decoded = msg::decode_bundle(buffer);
  const char* data = static_cast<const char*>(decoded[0].value.data_ptr());
  CHECK(data >= buffer.data());
  CHECK(data + 256 * 256 * 4 <= buffer.data() + buffer.size());
  CHECK(buffer.size() < 256 * 256 * 4 + 256);  // encoding added only a small header

  // The tensor keeps the bytes alive after every Buffer handle is gone.
  torch::Tensor survivor;
  {
    const auto temp = msg::encode_bundle(weights);
    survivor = msg::decode_bundle(temp)[0].value;
  }
  CHECK(torch::equal(survivor, weights[0].value));
}

TEST_CASE("malformed input raises DecodeError, never crashes", "[codec]") {
  const auto good = msg::encode_task(sample_task());

  SECTION("random bytes") {
    Rng rng(5);
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<char> bytes(8 * (1 + rng.below(64)));
      for (auto& b : bytes) b = static_cast<char>(rng.below(256));
      CHECK_THROWS_AS(msg::decode_task(msg::Buffer(std::move(bytes))), DecodeError);
    }
  }
  SECTION("flipped bytes inside a valid message") {
    Rng rng(6);
    int rejected = 0;
    for (int trial = 0; trial < 300; ++trial) {
      auto bad =
          edited(good, [&](std::vector<char>& b) { b[rng.below(b.size())] ^= static_cast<char>(1 + rng.below(255)); });
      // A flip inside tensor data is a valid message with other numbers; anything else must
      // surface as DecodeError (a kj::Exception or a crash would fail this check).
      CHECK_NOTHROW([&] {
        try {
          msg::decode_task(bad);
        } catch (const DecodeError&) {
          ++rejected;
        }
      }());
    }
    CHECK(rejected > 0);
  }
  SECTION("truncated") {
    for (std::size_t keep :
         {std::size_t{0}, std::size_t{4}, std::size_t{8}, good.size() / 2, good.size() - 8, good.size() - 3}) {
      auto bad = edited(good, [&](std::vector<char>& b) { b.resize(keep); });
      CHECK_THROWS_AS(msg::decode_task(bad), DecodeError);
    }
  }
  SECTION("trailing garbage") {
    auto bad = edited(good, [](std::vector<char>& b) { b.insert(b.end(), 16, 'x'); });
    CHECK_THROWS_WITH(msg::decode_task(bad), Catch::Contains("trailing bytes"));
  }
  SECTION("oversized") {
    msg::DecodeLimits limits;
    limits.max_bytes = 64;
    CHECK_THROWS_WITH(msg::decode_task(good, limits), Catch::Contains("exceeds the limit"));
  }
  SECTION("shape that does not match the data") {
    // Rewrite the first dimension of "w" (3) as 4: the data no longer fits the shape.
    const std::int64_t dims[2] = {3, 4};
    const auto at = find_bytes(good, dims, sizeof(dims));
    auto bad = edited(good, [&](std::vector<char>& b) { b[at] = 4; });
    CHECK_THROWS_WITH(msg::decode_task(bad), Catch::Contains("tensor 'w'") && Catch::Contains("bytes"));
  }
  SECTION("negative dimension") {
    const std::int64_t dims[2] = {3, 4};
    const auto at = find_bytes(good, dims, sizeof(dims));
    auto bad = edited(good, [&](std::vector<char>& b) {
      const std::int64_t minus = -3;
      std::memcpy(b.data() + at, &minus, 8);
    });
    CHECK_THROWS_WITH(msg::decode_task(bad), Catch::Contains("negative dimension"));
  }
  SECTION("unknown dtype") {
    NamedTensors one = {{"only", torch::ones({2})}};
    const auto buf = msg::encode_bundle(one);
    // The dtype enum is the first 16-bit field of the Tensor struct's data section; float32
    // is 0, so find the struct by decoding once and patch its data word.
    const auto decoded = msg::decode_bundle(buf);
    REQUIRE(decoded[0].value.scalar_type() == torch::kFloat32);
    bool rejected = false;
    for (std::size_t i = 0; i + 2 <= buf.size() && !rejected; i += 8) {
      auto bad = edited(buf, [&](std::vector<char>& b) { b[i] = 9; });
      try {
        msg::decode_bundle(bad);
      } catch (const DecodeError& e) {
        rejected = std::string(e.what()).find("unknown dtype code 9") != std::string::npos;
      }
    }
    CHECK(rejected);
  }
}

TEST_CASE("weights of the wrong architecture are refused with the tensor's name", "[codec]") {
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 1);
  auto state = state_of(*model);
  auto wrong_shape = clone(state);
  wrong_shape[0].value = torch::zeros({8, 1, 5, 5});
  CHECK_THROWS_WITH(load_state(*model, wrong_shape), Catch::Contains("conv1.weight") && Catch::Contains("shape"));
  auto wrong_dtype = clone(state);
  wrong_dtype[1].value = wrong_dtype[1].value.to(torch::kFloat64);
  CHECK_THROWS_WITH(load_state(*model, wrong_dtype), Catch::Contains("dtype"));
  auto missing = clone(state);
  missing.pop_back();
  CHECK_THROWS_AS(load_state(*model, missing), DecodeError);
  // The same state decoded from a buffer loads fine.
  load_state(*model, msg::decode_bundle(msg::encode_bundle(state)));
}
