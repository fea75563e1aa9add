// Secure aggregation's stages, costs and integer arithmetic against the spec's vectors and
// hand-computed cases (docs/privacy.md#secure-aggregation).
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>
#include "catch_torch.hpp"

#include "engine/core/rng.hpp"
#include "engine/privacy/secagg_encoding.hpp"
#include "engine/privacy/secagg_protocol.hpp"

using namespace drift::privacy;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

constexpr std::array<SecAggStage, 4> kPlainStages{SecAggStage::advertise_keys, SecAggStage::share_keys,
                                                  SecAggStage::masked_input, SecAggStage::unmasking};

// Runs SecAgg over a cohort of n with threshold t; drops[s] lists who stops in stage s.
SecAggSession run(std::uint32_t n, std::uint32_t t, const std::map<SecAggStage, std::vector<std::uint32_t>>& drops) {
  SecAggSession session(complete_graph(n), t, false);
  for (auto stage : kPlainStages) {
    std::vector<bool> completed(n, true);
    if (auto it = drops.find(stage); it != drops.end())
      for (auto u : it->second) completed[u] = false;
    session.end_stage(stage, completed);
    if (session.aborted()) break;
  }
  return session;
}

}  // namespace

TEST_CASE("secure aggregation: Flower's share and threshold rule", "[privacy][secagg]") {
  struct Case {
    std::uint32_t n;
    double fs, ft;
    std::uint32_t s, t, half;
  };
  for (const auto& c : std::vector<Case>{{10, .5, .6, 5, 3, 2},
                                         {10, .4, .5, 5, 2, 2},
                                         {10, .25, .5, 3, 2, 1},
                                         {10, 1.0, .6, 10, 6, 5},
                                         {9, 1.0, .5, 9, 4, 4},
                                         {100, .1, .5, 11, 6, 5}}) {
    INFO("n " << c.n << " f_s " << c.fs << " f_t " << c.ft);
    const auto r = share_rule(c.n, c.fs, c.ft);
    CHECK(r.shares == c.s);
    CHECK(r.threshold == c.t);
    CHECK(r.half == c.half);
  }
  const auto ring = ring_graph({3, 0, 4, 1, 2}, 1);  // 3-0-4-1-2-(3)
  CHECK(ring[4] == std::vector<std::uint32_t>{0, 1});
  CHECK(ring[3] == std::vector<std::uint32_t>{0, 2});
}

TEST_CASE("secure aggregation: who survives, and where a round aborts", "[privacy][secagg]") {
  using S = SecAggStage;
  // S13: 3 drop in S0, the round goes on; 2 more before their input: |U3| = 5 < 6.
  auto s13 = run(10, 6, {{S::advertise_keys, {0, 1, 2}}, {S::masked_input, {3, 4}}});
  CHECK(s13.aborted());
  CHECK(s13.abort_stage() == S::masked_input);
  CHECK(s13.survivors()[0] == 7);
  CHECK(s13.survivors()[2] == 5);
  // S14: 2 drop after S1 (|U3| = 8), 3 in S4: |U5| = 5 < 6.
  auto s14 = run(10, 6, {{S::masked_input, {0, 1}}, {S::unmasking, {2, 3, 4}}});
  CHECK(s14.aborted());
  CHECK(s14.abort_stage() == S::unmasking);
  CHECK(s14.survivors()[2] == 8);
  CHECK(s14.survivors()[4] == 5);
  // S15: 2 after S1, 1 in S4: completes over the 8 of U3; 2 masking keys and 8 self masks rebuilt.
  auto s15 = run(10, 6, {{S::masked_input, {0, 1}}, {S::unmasking, {2}}});
  CHECK_FALSE(s15.aborted());
  CHECK(std::count(s15.in_sum().begin(), s15.in_sum().end(), true) == 8);
  CHECK_FALSE(s15.in_sum()[0]);
  CHECK(s15.keys_rebuilt() == 2);
  CHECK(s15.self_masks_rebuilt() == 8);
  // A cohort of 5, threshold 3: two dropouts after masking survive, a third aborts.
  auto two = run(5, 3, {{S::unmasking, {1, 3}}});
  CHECK_FALSE(two.aborted());
  CHECK(std::count(two.in_sum().begin(), two.in_sum().end(), true) == 5);
  auto three = run(5, 3, {{S::unmasking, {0, 1, 3}}});
  CHECK(three.aborted());
  CHECK(three.abort_stage() == S::unmasking);
  CHECK(three.abort_reason() == "2 of 5 clients finished unmasking, below the threshold 3");
  CHECK(run(1, 1, {}).aborted());  // one client alone cannot hide its input
}

TEST_CASE("secure aggregation plus: a neighbourhood too thin aborts, one wide enough survives", "[privacy][secagg]") {
  // A ring of 6 with one neighbour on each side, t = 2: each closed neighbourhood holds 3.
  std::vector<std::uint32_t> order{0, 1, 2, 3, 4, 5};
  SecAggSession ok(ring_graph(order, 1), 2, false);
  ok.end_stage(SecAggStage::advertise_keys, {true, true, false, true, true, true});
  CHECK_FALSE(ok.aborted());
  SecAggSession thin(ring_graph(order, 1), 2, false);
  // Clients 1 and 3 gone: client 2 keeps only itself.
  thin.end_stage(SecAggStage::advertise_keys, {true, false, true, false, true, true});
  CHECK(thin.aborted());
  CHECK(thin.abort_reason() ==
        "after advertise_keys client 2's neighbourhood has 1 live members, below the threshold 2");
}

TEST_CASE("secure aggregation: bits per stage and the paper's expansion", "[privacy][secagg]") {
  // S2: n = 4, m = 1000, 32-bit elements, 256-bit keys and shares.
  SecAggSession s(complete_graph(4), 3, false);
  const SecAggSizes sizes{256, 256, 32, 1000};
  double total = 0;
  const std::vector<std::pair<double, double>> expected{{0, 512}, {1536, 1536}, {1536, 32000}, {0, 1024}};
  for (std::size_t i = 0; i < kPlainStages.size(); ++i) {
    const auto b = s.bits(0, kPlainStages[i], sizes);
    CHECK(b.down == expected[i].first);
    CHECK(b.up == expected[i].second);
    total += b.down + b.up;
    s.end_stage(kPlainStages[i], std::vector<bool>(4, true));
  }
  CHECK(total / 8 == 4768);
  // S1: n = 2^10 clients, m = 2^20 inputs in [0, 2^16): elements of ceil(log2(n (R - 1) + 1)) = 26
  // bits; Bonawitz et al.'s 1.73x expansion over sending 16-bit inputs in the clear.
  const std::uint32_t n = 1 << 10;
  SecAggSession big(complete_graph(n), n / 2 + 1, false);
  const SecAggSizes paper{256, 256, std::ceil(std::log2(n * 65535.0 + 1)), 1 << 20};
  double bits = 0;
  for (auto stage : kPlainStages) {
    const auto b = big.bits(0, stage, paper);
    bits += b.down + b.up;
    big.end_stage(stage, std::vector<bool>(n, true));
  }
  CHECK(bits == 29096960);
  CHECK_THAT(bits / (16.0 * (1 << 20)), WithinAbs(1.73431, 5e-6));
}

TEST_CASE("secure aggregation: the spec's timing example, stage by stage", "[privacy][secagg]") {
  // S3: latency 50 ms, 1 Mbit/s up, 4 Mbit/s down, 1 ms per key pair and key agreement, 1 ns per
  // PRG element, everything else free.
  SecAggSession s(complete_graph(4), 3, false);
  const SecAggSizes sizes{256, 256, 32, 1000};
  SecAggUnitCosts c{1e-3, 1e-3, 0, 0, 0, 1e-9, 0, 1};
  const std::vector<double> expected{0.102512, 0.104920, 0.135388, 0.101024};
  double total = 0;
  for (std::size_t i = 0; i < kPlainStages.size(); ++i) {
    const auto stage = kPlainStages[i];
    const double t = stage_done(0.05, 4e6, 1e6, s.bits(0, stage, sizes), s.client_work(0, stage, sizes, c));
    CHECK_THAT(t, WithinAbs(expected[i], 1e-12));
    total += t;
    s.end_stage(stage, std::vector<bool>(4, true));
  }
  CHECK_THAT(total, WithinAbs(0.443844, 1e-12));
  CHECK_THAT(total - (0.05 + 32000 / 1e6), WithinAbs(0.361844, 1e-12));
}

TEST_CASE("secure aggregation: Flower's encoding, modular sum and decoding", "[privacy][secagg]") {
  const std::vector<std::vector<double>> x{{0.5, -1.25}, {9.0, -0.001}, {-8.5, 3.3}};
  const RoundingDraw half = [](std::uint64_t) { return 0.5; };  // stochastic rounding, always half up
  // S4: weights 100, 200, 300 of W = 1000.
  FlowerEncoding e;
  ModularSum sum(e.modulus);
  const std::vector<double> weights{100, 200, 300};
  for (std::size_t i = 0; i < 3; ++i) sum.add(encode_flower(x[i], weights[i], e, half).values);
  CHECK(sum.reduced() == std::vector<std::uint64_t>{2516582, 6107955, 6518159});
  auto mean = decode_flower_mean(sum.reduced(), 3, e);
  CHECK_THAT(mean[0], WithinRel(-1.166668123669326, 1e-13));
  CHECK_THAT(mean[1], WithinRel(1.4413390861096518, 1e-13));
  // S5: weights 1 of W = 1: coordinates beyond c = 8 are clipped.
  e.max_weight = 1;
  ModularSum equal(e.modulus);
  std::uint64_t clipped = 0;
  for (const auto& xi : x) {
    const auto enc = encode_flower(xi, 1, e, half);
    clipped += enc.clipped_coords;
    equal.add(enc.values);
  }
  CHECK(clipped == 2);
  CHECK(equal.reduced() == std::vector<std::uint64_t>{12582912, 6422528, 6828589});
  mean = decode_flower_mean(equal.reduced(), 3, e);
  CHECK_THAT(mean[0], WithinRel(0.16666666666666666, 1e-13));
  CHECK_THAT(mean[1], WithinRel(0.6829999287923176, 1e-13));
  // S6: 1024 inputs at the top of the range wrap every element to 0; 1023 do not.
  for (std::uint32_t clients : {1023u, 1024u}) {
    ModularSum top(e.modulus);
    for (std::uint32_t i = 0; i < clients; ++i) top.add(std::vector<std::uint64_t>(5, e.quantization));
    CHECK(top.overflow_count() == (clients == 1024 ? 5 : 0));
    if (clients == 1024) CHECK(top.reduced() == std::vector<std::uint64_t>(5, 0));
  }
}

TEST_CASE("secure aggregation: the decoded sum is the float sum within the rounding bound", "[privacy][secagg]") {
  drift::Rng rng(17);
  FlowerEncoding e;
  e.max_weight = 1;
  const std::uint32_t clients = 12, d = 200;
  const double step = 2 * e.clip_range / static_cast<double>(e.quantization);
  for (bool stochastic : {false, true}) {
    ModularSum sum(e.modulus);
    std::vector<double> exact(d, 0.0);
    for (std::uint32_t i = 0; i < clients; ++i) {
      std::vector<double> xi(d);
      for (auto& v : xi) v = 4 * rng.normal();
      for (std::uint32_t j = 0; j < d; ++j) exact[j] += std::clamp(xi[j], -e.clip_range, e.clip_range);
      RoundingDraw draw;
      if (stochastic) draw = [&rng](std::uint64_t) { return rng.uniform_open(); };
      sum.add(encode_flower(xi, 1, e, draw).values);
    }
    const auto decoded = decode_flower_sum(sum.reduced(), clients, e);
    // Each client's rounding moves a coordinate by at most step / 2 (half to even) or one step.
    const double bound = clients * (stochastic ? step : step / 2);
    for (std::uint32_t j = 0; j < d; ++j) CHECK(std::abs(decoded[j] - exact[j]) <= bound);
    CHECK(sum.overflow_count() == 0);
  }
  // A modulus too small for the cohort: 12 clients of up to Q = 2^22 each overflow 2^24.
  FlowerEncoding small = e;
  small.modulus = 1ULL << 24;
  ModularSum tight(small.modulus);
  for (std::uint32_t i = 0; i < clients; ++i)
    tight.add(encode_flower(std::vector<double>(3, 7.5), 1, small, {}).values);
  CHECK(tight.overflow_count() == 4);
}

TEST_CASE("secure aggregation: FLSim's fixed point and its wrap-around", "[privacy][secagg]") {
  std::uint64_t convert = 0;
  const FixedPoint two{100, 16};
  std::vector<std::int64_t> got;
  for (double x : {17.42, 17.4298, -2.34, -2.3456, -2.3416, 12345.0167, -327.69})
    got.push_back(flsim_convert(x, two, convert));
  CHECK(got == std::vector<std::int64_t>{1742, 1743, -234, -235, -234, 32767, -32768});  // S7
  CHECK(convert == 1);
  const FixedPoint one{100, 8};
  const auto accumulate = [&](std::int64_t value, int times, const FixedPoint& f, std::uint64_t& wraps) {
    std::int64_t a = 0;
    for (int i = 0; i < times; ++i) a = flsim_accumulate(a, value, f, wraps);
    return a;
  };
  std::uint64_t wraps = 0;
  CHECK(accumulate(flsim_convert(2.123, one, convert), 10, one, wraps) == 118);  // S8
  CHECK(wraps == 9);
  wraps = 0;
  CHECK(accumulate(20, 10, one, wraps) == 72);  // S9
  CHECK(wraps == 1);
  wraps = 0;
  CHECK(accumulate(28, 10, FixedPoint{10, 8}, wraps) == 24);  // S10
  CHECK(wraps == 2);
  wraps = 0;
  CHECK(flsim_accumulate(-100, -28, one, wraps) == 0);  // S11: not two's complement
  CHECK(flsim_accumulate(-100, -30, one, wraps) == -2);
  CHECK(wraps == 0);
  CHECK(signed_mod_accumulate(-100, -30, one) == 126);  // true modular arithmetic
  CHECK(signed_mod_accumulate(100, 30, one) == -126);
  CHECK(flsim_convert(1e9, FixedPoint{1000, 16}, convert) == 32767);  // S12
  CHECK(flsim_convert(-1e9, FixedPoint{1000, 16}, convert) == -32768);
  CHECK_THROWS(flsim_convert(1, FixedPoint{1000, 72}, convert));
  CHECK_THROWS(flsim_convert(1, FixedPoint{0, 16}, convert));
}
