#include "catch_torch.hpp"

#include <cmath>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/fedopt.hpp"
#include "engine/algorithms/fedproto.hpp"
#include "engine/algorithms/scaffold.hpp"
#include "engine/core/state_archive.hpp"

using namespace drift;

namespace {

ClientUpdate update(std::uint32_t id, std::uint64_t n, double w, std::map<std::string, torch::Tensor> payload = {}) {
  ClientUpdate u;
  u.client_id = id;
  u.num_samples = n;
  u.weights = {{"w", torch::tensor({w}, torch::kFloat64)}};
  u.payload.tensors = std::move(payload);
  return u;
}

double first_value(const NamedTensors& t) { return t[0].value.item<double>(); }

}  // namespace

TEST_CASE("FedAdam, FedYogi and FedAdagrad steps against hand-computed numbers", "[algorithms][fedopt]") {
  // w = 0; clients at 1 and 3 (uniform mean): delta = 2, delta^2 = 4; eta 0.01, b1 0.9,
  // b2 0.99, tau 1e-3 (v0 = 1e-6); m1 = 0.1 * 2 = 0.2.
  const std::vector<ClientUpdate> updates = {update(0, 10, 1.0), update(1, 30, 3.0)};
  auto step = [&](FedOptServer::Rule rule) {
    FedOptServer server(rule, FedOptOptions{});  // eta 0.01, betas 0.9 / 0.99, tau 1e-3, uniform
    NamedTensors w = {{"w", torch::zeros({1}, torch::kFloat64)}};
    server.aggregate(w, updates, {1});
    return first_value(w);
  };
  const double adam_v = 0.99 * 1e-6 + 0.01 * 4;
  CHECK(step(FedOptServer::Rule::adam) == Approx(0.01 * 0.2 / (std::sqrt(adam_v) + 1e-3)).epsilon(1e-12));
  const double yogi_v = 1e-6 - 0.01 * 4 * -1.0;  // sign(1e-6 - 4) = -1
  CHECK(step(FedOptServer::Rule::yogi) == Approx(0.01 * 0.2 / (std::sqrt(yogi_v) + 1e-3)).epsilon(1e-12));
  const double adagrad_v = 1e-6 + 4;
  CHECK(step(FedOptServer::Rule::adagrad) == Approx(0.01 * 0.2 / (std::sqrt(adagrad_v) + 1e-3)).epsilon(1e-12));

  // A second Adam step keeps the moments: from w1, both clients land 1 above w1: delta = 1.
  FedOptServer server(FedOptServer::Rule::adam, FedOptOptions{});
  NamedTensors w = {{"w", torch::zeros({1}, torch::kFloat64)}};
  server.aggregate(w, updates, {1});
  const double w1 = first_value(w);
  server.aggregate(w, {update(0, 10, w1 + 1), update(1, 30, w1 + 1)}, {2});
  const double m2 = 0.9 * 0.2 + 0.1 * 1, v2 = 0.99 * adam_v + 0.01 * 1;
  CHECK(first_value(w) == Approx(w1 + 0.01 * m2 / (std::sqrt(v2) + 1e-3)).epsilon(1e-12));
}

TEST_CASE("FedAvgM applies server momentum to the sample-weighted change", "[algorithms]") {
  // Samples 10 and 30 at 1 and 3: mean change 2.5; u1 = 2.5, w1 = 2.5; then both at w1 + 1:
  // u2 = 0.9 * 2.5 + 1 = 3.25, w2 = 2.5 + 3.25 = 5.75.
  ParamSet p;
  p.set("server_lr", 1.0);
  p.set("server_momentum", 0.9);
  p.set("weighting", std::string("samples"));
  auto server = find_algorithm("fedavgm")->make_server(p, FederationShape{});
  NamedTensors w = {{"w", torch::zeros({1}, torch::kFloat64)}};
  server->aggregate(w, {update(0, 10, 1.0), update(1, 30, 3.0)}, {1});
  CHECK(first_value(w) == Approx(2.5));
  server->aggregate(w, {update(0, 10, 3.5), update(1, 30, 3.5)}, {2});
  CHECK(first_value(w) == Approx(5.75));
}

TEST_CASE("SCAFFOLD server: x moves by the mean change, c by the sum of deltas over K", "[algorithms][scaffold]") {
  // K = 4 registered clients; x = 0; models at 1 and 3 -> x = 2 (eta_g = 1);
  // delta_c = 0.4 and 0.8 -> c = (0.4 + 0.8) / 4 = 0.3.
  ScaffoldServer server(1.0, 4);
  CHECK(server.broadcast(1).tensors.empty());  // c starts at zero: nothing to send
  NamedTensors x = {{"w", torch::zeros({1}, torch::kFloat64)}};
  server.aggregate(x,
                   {update(0, 10, 1.0, {{"c_delta:w", torch::tensor({0.4})}}),
                    update(1, 30, 3.0, {{"c_delta:w", torch::tensor({0.8})}})},
                   {1});
  CHECK(first_value(x) == Approx(2.0));
  CHECK(server.broadcast(2).tensors.at("c:w").item<double>() == Approx(0.3));
}

TEST_CASE("SCAFFOLD client: control variate update and zero-valued correction term", "[algorithms][scaffold]") {
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 2);
  TrainingTask task;
  task.weights = state_of(*model);
  task.hyper.learning_rate = 0.1;
  const auto first = model->named_parameters(true)[0];
  // The server's c is 0.2 for the first parameter; the client's c_i starts at 0.
  task.payload.tensors["c:" + first.key()] = torch::full(first.value().sizes(), 0.2);
  Payload state;
  ScaffoldClient client;
  ClientContext ctx{0, task, state, *model};
  client.begin(ctx);

  auto x = torch::zeros({2, 1, 28, 28});
  auto y = torch::tensor({std::int64_t{3}, std::int64_t{4}});
  auto out = model->forward(x);
  auto plain = ClientAlgorithm().loss(y, out, ctx);
  auto corrected = client.loss(y, out, ctx);
  CHECK(corrected.item<double>() == Approx(plain.item<double>()));  // the correction adds no value...
  corrected.backward();
  auto grad_corrected = first.value().grad().clone();
  model->zero_grad();
  ClientAlgorithm().loss(y, model->forward(x), ctx).backward();
  // ...but adds c - c_i = 0.2 to the first parameter's gradient.
  CHECK(torch::allclose(grad_corrected - first.value().grad(), torch::full(first.value().sizes(), 0.2f), 1e-6, 1e-6));

  // After T = 5 steps with lr 0.1 the parameters moved by -0.5 (x - y = 0.5):
  // c_i+ = 0 - 0.2 + 0.5 / (5 * 0.1) = 0.8 for the first parameter, 1.0 for the others.
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.sub_(0.5);
  }
  ClientUpdate u;
  u.metrics.steps = 5;
  client.end(ctx, u);
  CHECK(u.payload.tensors.at("c_delta:" + first.key()).mean().item<double>() == Approx(0.8));
  const auto second = model->named_parameters(true)[1].key();
  CHECK(u.payload.tensors.at("c_delta:" + second).mean().item<double>() == Approx(1.0));
  CHECK(state.tensors.at("c_i:" + first.key()).mean().item<double>() == Approx(0.8));
}

TEST_CASE("FedProto server averages prototypes per class, unweighted", "[algorithms][fedproto]") {
  // Class 0 from both clients: [1, 1] and [3, 3] -> [2, 2]; class 1 from client 1 only: [2, 0].
  FedProtoServer server;
  CHECK(server.broadcast(1).class_vectors.empty());
  auto with = [](std::uint32_t id, std::uint64_t n, std::map<std::uint32_t, torch::Tensor> protos) {
    auto u = update(id, n, 1.0);
    u.payload.class_vectors["prototypes"] = std::move(protos);
    return u;
  };
  NamedTensors w = {{"w", torch::zeros({1}, torch::kFloat64)}};
  server.aggregate(w,
                   {with(0, 10, {{0, torch::tensor({{1.0f, 1.0f}})}}),
                    with(1, 90, {{0, torch::tensor({{3.0f, 3.0f}})}, {1, torch::tensor({{2.0f, 0.0f}})}})},
                   {1});
  const auto sent = server.broadcast(2).class_vectors.at("prototypes");
  CHECK(torch::equal(sent.at(0), torch::tensor({{2.0f, 2.0f}})));
  CHECK(torch::equal(sent.at(1), torch::tensor({{2.0f, 0.0f}})));
  CHECK(first_value(w) == Approx(1.0));  // weights: FedAvg
}

TEST_CASE("FedProto client adds lambda * MSE to the prototype and uploads feature means", "[algorithms][fedproto]") {
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 2);
  TrainingTask task;
  task.weights = state_of(*model);
  // A global prototype for class 3 only: all 0.5.
  task.payload.class_vectors["prototypes"][3] = torch::full({1, 128}, 0.5f);
  Payload state;
  FedProtoClient client(2.0);
  ClientContext ctx{0, task, state, *model};
  client.begin(ctx);
  auto x = torch::randn({4, 1, 28, 28});
  auto y = torch::tensor({std::int64_t{3}, std::int64_t{3}, std::int64_t{5}, std::int64_t{3}});
  auto out = model->forward(x);
  const double ce = ClientAlgorithm().loss(y, out, ctx).item<double>();
  const auto class3 = out.features.index({y == 3});
  const double mse = (class3 - 0.5).pow(2).mean().item<double>();
  CHECK(client.loss(y, out, ctx).item<double>() == Approx(ce + 2.0 * mse).epsilon(1e-5));
  ClientUpdate u;
  client.end(ctx, u);
  const auto& up = u.payload.class_vectors.at("prototypes");
  CHECK(up.size() == 2);  // classes 3 and 5
  CHECK(torch::allclose(up.at(3), class3.mean(0, true)));
  CHECK(torch::allclose(up.at(5), out.features.index({y == 5}).mean(0, true)));
}
