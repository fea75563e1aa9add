// FedNova's normalised averaging against hand-computed vectors (docs/algorithms.md#fednova).
#include "catch_torch.hpp"

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"

using namespace drift;

namespace {

ClientUpdate update(std::uint32_t id, std::uint64_t n, std::uint32_t steps, std::vector<double> y) {
  ClientUpdate u;
  u.client_id = id;
  u.num_samples = n;
  u.metrics.steps = steps;
  u.weights = {{"w", torch::tensor(y, torch::kFloat64)}, {"count", torch::tensor({std::int64_t{7 + id}})}};
  return u;
}

NamedTensors start() {
  return {{"w", torch::tensor({1.0, 2.0}, torch::kFloat64)}, {"count", torch::tensor({std::int64_t{0}})}};
}

std::unique_ptr<ServerAlgorithm> fednova(double momentum, double gmf = 0.0) {
  FederationShape shape;
  shape.local_momentum = momentum;
  shape.local_lr = [](std::uint32_t) { return 0.1; };
  ParamSet p;
  p.set("server_momentum", gmf);
  return find_algorithm("fednova")->make_server(p, shape);
}

std::vector<double> values(const NamedTensors& w) {
  const auto t = w[0].value.contiguous();
  return {t[0].item<double>(), t[1].item<double>()};
}

// x = [1, 2]; client 0: 1 sample, 1 step, y = [0, 2] (change [1, 0]); client 1: 3 samples,
// 3 steps, y = [1, -1] (change [0, 3]). p = (1/4, 3/4).
std::vector<ClientUpdate> unequal() { return {update(0, 1, 1, {0.0, 2.0}), update(1, 3, 3, {1.0, -1.0})}; }

}  // namespace

TEST_CASE("FedNova's normaliser: tau without momentum, the summed counter with it", "[algorithms][fednova]") {
  CHECK(fednova_normaliser(3, 0.0) == 3.0);
  CHECK(fednova_normaliser(3, 0.5) == 4.25);  // 1 + 1.5 + 1.75
  CHECK(fednova_normaliser(3, 0.5) == Approx((3 - 0.5 * (1 - 0.125) / 0.5) / 0.5));
  CHECK(fednova_normaliser(0, 0.9) == 0.0);
}

TEST_CASE("FedNova steps along the normalised changes scaled by tau_eff", "[algorithms][fednova]") {
  // a = (1, 3), tau_eff = 1/4 + 9/4 = 2.5, coefficients p_i tau_eff / a_i = (0.625, 0.625):
  // x - 0.625 [1, 0] - 0.625 [0, 3] = [0.375, 0.125] (FedAvg would give [0.75, -0.25]).
  auto server = fednova(0.0);
  auto x = start();
  const auto updates = unequal();
  server->aggregate(x, updates, {1});
  CHECK(values(x) == std::vector<double>{0.375, 0.125});
  CHECK(x[1].value.item<std::int64_t>() == 7);  // an integer tensor is taken from the first update
  CHECK(server->metrics().scalars.at("tau_eff") == 2.5);
  const auto shares = server->shares(updates);
  CHECK(shares == ClientShares{{0, 0.625}, {1, 0.625}});
}

TEST_CASE("FedNova with local momentum 0.5: a = (1, 4.25)", "[algorithms][fednova]") {
  // tau_eff = 0.25 + 0.75 * 4.25 = 3.4375; coefficients 0.859375 and 0.75 * 3.4375 / 4.25.
  auto server = fednova(0.5);
  auto x = start();
  server->aggregate(x, unequal(), {1});
  const double c1 = 0.75 * 3.4375 / 4.25;
  CHECK(values(x)[0] == Approx(1.0 - 0.859375));
  CHECK(values(x)[1] == Approx(2.0 - 3.0 * c1));
}

TEST_CASE("FedNova's server momentum (gmf) accumulates the normalised step over rounds", "[algorithms][fednova]") {
  // Round 1: buffer = step / lr = [6.25, 18.75], x = [0.375, 0.125]. Round 2, same models:
  // changes [0.375, -1.875] and [-0.625, 1.125], step 0.625 [-0.25, -0.75]; buffer =
  // 0.5 [6.25, 18.75] + step / 0.1 = [1.5625, 4.6875]; x = [0.375, 0.125] - 0.1 buffer.
  auto server = fednova(0.0, 0.5);
  auto x = start();
  server->aggregate(x, unequal(), {1});
  CHECK(values(x)[0] == Approx(0.375));
  CHECK(values(x)[1] == Approx(0.125));
  server->aggregate(x, unequal(), {2});
  CHECK(values(x)[0] == Approx(0.21875));
  CHECK(values(x)[1] == Approx(-0.34375));
}

TEST_CASE("FedNova with equal local steps is FedAvg, bit for bit", "[algorithms][fednova]") {
  const std::vector<ClientUpdate> updates = {update(0, 7, 5, {0.1, 2.3}), update(1, 3, 5, {1.7, -0.9}),
                                             update(2, 11, 5, {0.3, 0.4})};
  auto nova = start(), avg = start();
  fednova(0.9)->aggregate(nova, updates, {1});
  find_algorithm("fedavg")->make_server(ParamSet{}, FederationShape{})->aggregate(avg, updates, {1});
  CHECK(torch::equal(nova[0].value, avg[0].value));
  CHECK(torch::equal(nova[1].value, avg[1].value));
}
