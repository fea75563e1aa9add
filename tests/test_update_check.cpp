// The server's rules for a client's update (engine/tensors/update_check.hpp), without actors.
#include "catch_torch.hpp"

#include <limits>

#include "engine/core/error.hpp"
#include "engine/tensors/update_check.hpp"

using namespace drift;

namespace {

NamedTensors reference() { return {{"w", torch::zeros({2, 3})}, {"steps", torch::zeros({1}, torch::kInt64)}}; }

ClientUpdate update_from(std::uint32_t client) {
  ClientUpdate u;
  u.client_id = client;
  u.weights = {{"w", torch::ones({2, 3})}, {"steps", torch::ones({1}, torch::kInt64)}};
  return u;
}

EvalResult evaluation(std::uint64_t begin, std::uint64_t end, std::vector<std::uint64_t> correct,
                      std::vector<std::uint64_t> count) {
  EvalResult e;
  e.begin = begin;
  e.end = end;
  e.correct = std::move(correct);
  e.count = std::move(count);
  return e;
}

}  // namespace

TEST_CASE("an update from the client it was sent to, shaped like the model and finite, is accepted", "[update_check]") {
  CHECK_NOTHROW(check_update(update_from(3), 3, reference(), std::nullopt));
}

TEST_CASE("an update is refused when it names another client, another shape or a non-finite value", "[update_check]") {
  REQUIRE_THROWS_MATCHES(check_update(update_from(4), 3, reference(), std::nullopt), DecodeError,
                         Catch::Message("update claims to come from client 4"));
  auto reshaped = update_from(3);
  reshaped.weights[0].value = torch::ones({3, 2});
  REQUIRE_THROWS_AS(check_update(reshaped, 3, reference(), std::nullopt), DecodeError);
  auto poisoned = update_from(3);
  poisoned.weights[0].value[1][2] = std::numeric_limits<float>::quiet_NaN();
  REQUIRE_THROWS_MATCHES(check_update(poisoned, 3, reference(), std::nullopt), DecodeError,
                         Catch::Message("tensor 'w' holds nan or infinite values"));
}

TEST_CASE("every non-finite value is found, in float32 and float64, and the extremes pass", "[update_check]") {
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto dtype : {torch::kFloat32, torch::kFloat64}) {
    for (double bad : {inf, -inf, std::numeric_limits<double>::quiet_NaN()}) {
      for (std::int64_t at : {0, 5, 36}) {  // first, middle, last of 37 values
        auto u = update_from(3);
        auto values = torch::zeros({37}, dtype);
        values[at] = bad;
        u.weights = {{"w", values}};
        INFO(dtype << " " << bad << " at " << at);
        CHECK_THROWS_AS(check_update(u, 3, {{"w", torch::zeros({37}, dtype)}}, std::nullopt), DecodeError);
      }
    }
    // The largest finite value, the smallest subnormal and negative zero are finite.
    auto u = update_from(3);
    const bool single = dtype == torch::kFloat32;
    u.weights = {
        {"w", torch::tensor(
                  {single ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max(),
                   single ? std::numeric_limits<float>::denorm_min() : std::numeric_limits<double>::denorm_min(), -0.0},
                  torch::TensorOptions().dtype(dtype))}};
    CHECK_NOTHROW(check_update(u, 3, {{"w", torch::zeros({3}, dtype)}}, std::nullopt));
  }
  // A strided view goes through LibTorch's own check.
  auto u = update_from(3);
  auto wide = torch::zeros({4, 6});
  wide[3][4] = std::numeric_limits<float>::quiet_NaN();
  u.weights = {{"w", wide.t()}};
  CHECK_THROWS_AS(check_update(u, 3, {{"w", torch::zeros({6, 4})}}, std::nullopt), DecodeError);
}

TEST_CASE("a private-model update's evaluation must cover exactly the client's test split", "[update_check]") {
  const PersonalSplit split{100, 110, 2};  // samples 100..109, two classes
  auto u = update_from(3);
  REQUIRE_THROWS_MATCHES(check_update(u, 3, reference(), split), DecodeError,
                         Catch::Message("a private-model update carries no evaluation"));
  u.personal = evaluation(100, 110, {3, 4}, {6, 4});
  CHECK_NOTHROW(check_update(u, 3, reference(), split));
  for (const auto& wrong : {evaluation(101, 110, {3, 4}, {5, 4}),           // another range
                            evaluation(100, 110, {3, 4}, {6, 3}),           // counts 9 of 10 samples
                            evaluation(100, 110, {3, 4, 0}, {6, 4, 0})}) {  // three classes
    u.personal = wrong;
    REQUIRE_THROWS_MATCHES(check_update(u, 3, reference(), split), DecodeError,
                           Catch::Message("the evaluation does not cover the client's test split"));
  }
  u.personal = evaluation(100, 110, {7, 4}, {6, 4});
  REQUIRE_THROWS_MATCHES(check_update(u, 3, reference(), split), DecodeError,
                         Catch::Message("the evaluation counts more hits than samples"));
}
