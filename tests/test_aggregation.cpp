#include "catch_torch.hpp"

#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/fedprox.hpp"
#include "engine/metrics/summary.hpp"
#include "engine/training/local_training.hpp"

using namespace drift;

namespace {

ClientUpdate update(std::uint32_t id, std::uint64_t n, std::vector<float> w, std::vector<std::int64_t> steps = {0}) {
  ClientUpdate u;
  u.client_id = id;
  u.num_samples = n;
  u.weights = {{"w", torch::tensor(w)}, {"steps", torch::tensor(steps)}};
  return u;
}

}  // namespace

TEST_CASE("FedAvg weights clients by sample count", "[aggregation]") {
  // Hand-computed: n = (1, 3); w = 1/4 * [1, 2] + 3/4 * [3, 6] = [2.5, 5.0].
  NamedTensors global = {{"w", torch::tensor({0.0f, 0.0f})}, {"steps", torch::tensor({std::int64_t{0}})}};
  std::vector<ClientUpdate> updates = {update(0, 1, {1, 2}, {10}), update(1, 3, {3, 6}, {30})};
  auto weights = sample_weights(updates);
  CHECK(weights == std::vector<double>{0.25, 0.75});

  auto server = find_algorithm("fedavg")->make_server(ParamSet{}, FederationShape{});
  server->aggregate(global, updates, {1});
  CHECK(global[0].value[0].item<float>() == 2.5f);
  CHECK(global[0].value[1].item<float>() == 5.0f);
  CHECK(global[0].value.scalar_type() == torch::kFloat32);
  // Integer buffers cannot be averaged: taken from the first (lowest id) update.
  CHECK(global[1].value.item<std::int64_t>() == 10);
}

TEST_CASE("FedAvg of three clients, and of delta updates", "[aggregation]") {
  // n = (2, 2, 4): weights (0.25, 0.25, 0.5); 0.25*1 + 0.25*5 + 0.5*(-2) = 0.5.
  NamedTensors global = {{"w", torch::tensor({1.0f})}, {"steps", torch::tensor({std::int64_t{0}})}};
  std::vector<ClientUpdate> updates = {update(0, 2, {1}), update(1, 2, {5}), update(2, 4, {-2})};
  auto avg = weighted_average(global, updates, sample_weights(updates));
  CHECK(avg[0].value.item<float>() == 0.5f);
}

TEST_CASE("aggregation refuses an update of another architecture", "[aggregation]") {
  NamedTensors global = {{"w", torch::tensor({1.0f, 2.0f})}, {"steps", torch::tensor({std::int64_t{0}})}};
  std::vector<ClientUpdate> updates = {update(0, 1, {1, 2, 3})};
  CHECK_THROWS_WITH(weighted_average(global, updates, {1.0}), Catch::Contains("shape"));
}

TEST_CASE("FedProx adds (mu/2)||w - w_g||^2 with gradient mu (w - w_g)", "[fedprox]") {
  // w = [1, 2], w_g = [0, 4]: ||w - w_g||^2 = 1 + 4 = 5; mu = 0.1 -> 0.25; grad = 0.1*[1, -2].
  auto w = torch::tensor({1.0f, 2.0f}, torch::requires_grad());
  auto anchor = torch::tensor({0.0f, 4.0f});
  auto term = proximal_term({w}, {anchor}, 0.1);
  CHECK(term.item<float>() == Approx(0.25f));
  term.backward();
  CHECK(w.grad()[0].item<float>() == Approx(0.1f));
  CHECK(w.grad()[1].item<float>() == Approx(-0.2f));
}

TEST_CASE("FedProx's client loss is cross-entropy plus the proximal term", "[fedprox]") {
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 3);
  TrainingTask task;
  task.weights = state_of(*model);
  Payload state;
  ParamSet params;
  params.set("mu", 2.0);
  auto prox = find_algorithm("fedprox")->make_client(params);
  auto plain = find_algorithm("fedavg")->make_client(ParamSet{});
  ClientContext ctx{0, task, state, *model};
  prox->begin(ctx);
  auto x = torch::zeros({2, 1, 28, 28});
  auto y = torch::tensor({std::int64_t{1}, std::int64_t{2}});
  auto out = model->forward(x);
  // At the anchor the proximal term is zero.
  CHECK(prox->loss(y, out, ctx).item<float>() == Approx(plain->loss(y, out, ctx).item<float>()));
  {
    torch::NoGradGuard no_grad;
    model->parameters()[0].add_(0.5);  // conv1.weight: 16*1*5*5 = 400 entries moved by 0.5
  }
  out = model->forward(x);
  const float expected = plain->loss(y, out, ctx).item<float>() + 2.0f / 2.0f * 400 * 0.25f;
  CHECK(prox->loss(y, out, ctx).item<float>() == Approx(expected));
}

TEST_CASE("evaluation chunks combine into exact totals", "[evaluation]") {
  CHECK(evaluation_chunks(5, 2) == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 2}, {2, 4}, {4, 5}});
  std::vector<EvalResult> parts = {{0, 4, 2.0, {1, 2}, {2, 2}}, {4, 8, 6.0, {0, 2}, {2, 2}}};
  auto e = combine_evaluations(parts, 2);
  CHECK(e.accuracy == 5.0 / 8.0);
  CHECK(e.loss == 1.0);
  CHECK(e.per_class_accuracy == std::vector<double>{0.25, 1.0});
}

TEST_CASE("the initial model is a function of the seed alone", "[models]") {
  auto a = state_of(*make_model("fedavg-cnn", {1, 28, 28}, 10, 5));
  auto b = state_of(*make_model("fedavg-cnn", {1, 28, 28}, 10, 5));
  auto c = state_of(*make_model("fedavg-cnn", {1, 28, 28}, 10, 6));
  std::int64_t params = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(torch::equal(a[i].value, b[i].value));
    params += a[i].value.numel();
  }
  CHECK_FALSE(torch::equal(a[0].value, c[0].value));
  CHECK(params == 1663370);  // McMahan et al.'s CNN on 28x28x1, 10 classes
  // Weights follow U(-1/sqrt(fan_in), 1/sqrt(fan_in)): conv1 has fan_in 25, bound 0.2.
  CHECK(a[0].value.abs().max().item<float>() <= 0.2f);
  CHECK(a[0].value.abs().max().item<float>() > 0.19f);
  std::int64_t fedau_params = 0;
  for (const auto& t : state_of(*make_model("fedau-cnn", {1, 28, 28}, 10, 5))) fedau_params += t.value.numel();
  CHECK(fedau_params == 211690);  // FedAU's Fashion-MNIST CNN: 320 + 9,248 + 200,832 + 1,290
  auto out = make_model("small-cnn", {1, 28, 28}, 10, 1)->forward(torch::zeros({3, 1, 28, 28}));
  CHECK(out.features.sizes() == torch::IntArrayRef({3, 128}));
  CHECK(out.logits.sizes() == torch::IntArrayRef({3, 10}));
}
