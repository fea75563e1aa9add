// MOON, FedNH, FedRCL and FedCCL against numbers computed by hand on tiny examples.
#include "catch_torch.hpp"

#include <cmath>

#include "engine/algorithms/fedccl.hpp"
#include "engine/algorithms/fednh.hpp"
#include "engine/algorithms/fedrcl.hpp"
#include "engine/algorithms/moon.hpp"
#include "engine/training/local_training.hpp"

using namespace drift;

namespace {

torch::Tensor rows(std::initializer_list<double> values, std::int64_t d) {
  return torch::tensor(std::vector<double>(values), torch::kFloat32).reshape({-1, d});
}

ClientUpdate with_vectors(std::uint32_t id, std::uint64_t n, NamedTensors weights,
                          std::map<std::string, std::map<std::uint32_t, torch::Tensor>> vectors) {
  ClientUpdate u;
  u.client_id = id;
  u.num_samples = n;
  u.weights = std::move(weights);
  u.payload.class_vectors = std::move(vectors);
  return u;
}

// Eight random grey 28x28 images with these labels, 10 classes: a client's local data.
std::shared_ptr<Dataset> eight_images(const std::vector<std::int64_t>& labels) {
  auto data = std::make_shared<Dataset>();
  data->images = torch::rand({8, 1, 28, 28});
  data->labels = torch::tensor(labels);
  data->num_classes = 10;
  return data;
}

}  // namespace

TEST_CASE("MOON contrastive term against hand-computed values", "[algorithms][moon]") {
  // tau 0.5. Row 0: cos(z, g) = 1, cos(z, p) = 0: log(1 + e^-2). Row 1: 0 and 1: log(1 + e^2).
  const auto z = rows({1, 0, 1, 1}, 2), g = rows({3, 0, 1, -1}, 2), p = rows({0, 2, 2, 2}, 2);
  const auto l = moon_contrastive(z, g, p, 0.5);
  CHECK(l[0].item<double>() == Approx(std::log1p(std::exp(-2.0))).epsilon(1e-6));
  CHECK(l[1].item<double>() == Approx(std::log1p(std::exp(2.0))).epsilon(1e-6));
}

TEST_CASE("MOON: no contrast in round 1, the trained model becomes the client's previous model", "[algorithms][moon]") {
  ModelOptions options;
  options.projection_dim = 16;
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 2, options);
  TrainingTask task;
  task.round = 1;
  task.weights = state_of(*model);
  Payload state;
  MoonClient client(5.0, 0.5);
  ClientContext ctx{0, task, state, *model};
  client.begin(ctx);
  const auto x = torch::rand({4, 1, 28, 28});
  const auto y = torch::tensor(std::vector<std::int64_t>{1, 2, 3, 4});
  ctx.inputs = &x;
  auto out = model->forward(x);
  CHECK(client.loss(y, out, ctx).item<double>() == Approx(ClientAlgorithm().loss(y, out, ctx).item<double>()));

  ClientUpdate update;
  update.weights = state_of(*model);
  client.end(ctx, update);
  CHECK(state.tensors.size() == update.weights.size());

  // Round 2 from the same weights: global = previous = local, so cos = 1 on both sides and
  // the term is log 2 for every sample.
  task.round = 2;
  client.begin(ctx);
  out = model->forward(x);
  const double ce = ClientAlgorithm().loss(y, out, ctx).item<double>();
  CHECK(client.loss(y, out, ctx).item<double>() == Approx(ce + 5.0 * std::log(2.0)).epsilon(1e-5));
}

TEST_CASE("FedNH: unweighted model mean and count-weighted prototype update", "[algorithms][fednh]") {
  // W = I (2 classes, d = 2), rho 0.5. Class 0: client A holds 1 sample at [0, 1], client B 3
  // at [2, 0] (normalised to [1, 0]): mu_0 = normalize([0.75, 0.25]);
  // W_0 = normalize(0.5 [1, 0] + 0.5 mu_0) = [0.98708746, 0.16018224]. Class 1: nobody, kept.
  NamedTensors global = {{"head.weight", torch::eye(2)}, {"head.scale", torch::ones({1})}};
  auto weights = [](double scale) {
    return NamedTensors{{"head.weight", torch::eye(2)}, {"head.scale", torch::full({1}, static_cast<float>(scale))}};
  };
  std::vector<ClientUpdate> updates = {
      with_vectors(0, 100, weights(1.0),
                   {{"fednh.prototypes", {{0, rows({0, 1}, 2)}}}, {"fednh.counts", {{0, rows({1}, 1)}}}}),
      with_vectors(1, 1, weights(2.0),
                   {{"fednh.prototypes", {{0, rows({2, 0}, 2)}}}, {"fednh.counts", {{0, rows({3}, 1)}}}})};
  FedNHServer server(0.5, 1.0);
  server.aggregate(global, updates, {1});
  const auto w = global[0].value;
  CHECK(w[0][0].item<double>() == Approx(0.98708746).epsilon(1e-6));
  CHECK(w[0][1].item<double>() == Approx(0.16018224).epsilon(1e-6));
  CHECK(w[1][0].item<double>() == 0.0);
  CHECK(w[1][1].item<double>() == 1.0);
  CHECK(global[1].value.item<double>() == Approx(1.5));  // unweighted, despite 100 vs 1 samples

  NamedTensors again = {{"head.weight", torch::eye(2)}, {"head.scale", torch::ones({1})}};
  FedNHServer half(0.5, 0.5);
  half.aggregate(again, updates, {1});
  CHECK(again[1].value.item<double>() == Approx(1.25));  // 1 + 0.5 (1.5 - 1)
}

TEST_CASE("FedNH freezes the prototypes during local training", "[algorithms][fednh]") {
  ModelOptions options;
  options.head = HeadKind::cosine;
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 2, options);
  TrainingTask task;
  task.round = 1;
  task.weights = state_of(*model);
  task.hyper.learning_rate = 0.1;
  task.hyper.batch_size = 4;
  auto data = eight_images({0, 1, 2, 3, 0, 1, 2, 3});
  std::vector<std::int64_t> indices = {0, 1, 2, 3, 4, 5, 6, 7};
  Payload state;
  FedNHClient client;
  auto update = train_locally(*model, client, *data, indices, task, 0, state, 1);
  CHECK(torch::equal(update.weights[6].value, task.weights[6].value));  // head.weight
  CHECK_FALSE(torch::equal(update.weights[0].value, task.weights[0].value));
  const auto& counts = update.payload.class_vectors.at("fednh.counts");
  CHECK(counts.size() == 4);
  CHECK(counts.at(2).item<double>() == 2.0);
  const auto p = update.payload.class_vectors.at("fednh.prototypes").at(0);
  CHECK(p.norm().item<double>() == Approx(1.0));
}

TEST_CASE("FedRCL level loss against a hand-computed example", "[algorithms][fedrcl]") {
  // f0 = [1, 0] and f1 = [1, 1] of class 0 (cos c = 0.7071), f2 = [0, 1] of class 1; tau 1.
  // SCL: anchor 0: log(1 + e^{-c}); anchor 1 (negative f2 at c): log 2; anchor 2 has no partner.
  // Penalty (threshold 0.7 <= c): anchors 0 and 1: log(1 + e^{c - 1}); anchor 2: log(1 + e^{-2}).
  FedRCLOptions o;
  o.tau = 1.0;
  const auto f = rows({1, 0, 1, 1, 0, 1}, 2);
  const auto y = torch::tensor(std::vector<std::int64_t>{0, 0, 1});
  const double c = 1.0 / std::sqrt(2.0);
  const double scl = (std::log1p(std::exp(-c)) + std::log(2.0)) / 2.0;
  const double penalty = (2.0 * std::log1p(std::exp(c - 1.0)) + std::log1p(std::exp(-2.0))) / 3.0;
  CHECK(fedrcl_level_loss(f, y, o).item<double>() == Approx(scl + penalty).epsilon(1e-6));
  // Above the threshold the pair is not pushed apart: the penalty uses the -1 placeholder.
  o.threshold = 0.8;
  CHECK(fedrcl_level_loss(f, y, o).item<double>() == Approx(scl + std::log1p(std::exp(-2.0))).epsilon(1e-6));
  // Finite at tau 0.01.
  o.tau = 0.01;
  CHECK(std::isfinite(fedrcl_level_loss(f, y, o).item<double>()));
}

TEST_CASE("FedCCL server: FINCH centres de-bias the global signal", "[algorithms][fedccl]") {
  // Class 0: client A's three signals near 0 degrees, client B's two near 90 degrees. FINCH
  // gives the two groups; H_0 = mean of the two centres, not of the five signals.
  std::vector<ClientUpdate> updates = {
      with_vectors(0, 10, {{"w", torch::zeros({1})}}, {{"fedccl.signals", {{0, rows({1, 0, 1, 0.1, 1, 0.2}, 2)}}}}),
      with_vectors(1, 10, {{"w", torch::ones({1})}}, {{"fedccl.signals", {{0, rows({0, 1, 0.1, 1}, 2)}}}})};
  NamedTensors global = {{"w", torch::zeros({1})}};
  FedCCLServer server;
  CHECK(server.broadcast(1).empty());
  server.aggregate(global, updates, {1});
  CHECK(global[0].value.item<double>() == Approx(0.5));
  const auto p = server.broadcast(2);
  CHECK(p.class_vectors.at("fedccl.local").at(0).size(0) == 5);
  const auto h = p.class_vectors.at("fedccl.global").at(0);
  CHECK(h[0][0].item<double>() == Approx(0.525));
  CHECK(h[0][1].item<double>() == Approx(0.55));
}

TEST_CASE("FedCCL client: CE only without signals, local signals from FINCH after training", "[algorithms][fedccl]") {
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 2);
  TrainingTask task;
  task.round = 1;
  task.weights = state_of(*model);
  task.hyper.batch_size = 4;
  auto data = eight_images({0, 1, 0, 1, 0, 1, 0, 5});
  std::vector<std::int64_t> indices = {0, 1, 2, 3, 4, 5, 6, 7};
  Payload state;
  FedCCLClient client(FedCCLOptions{});
  ClientContext ctx{0, task, state, *model, data.get(), &indices};
  client.begin(ctx);
  const auto x = data->images.slice(0, 0, 4);
  const auto y = data->labels.slice(0, 0, 4);
  auto out = model->forward(x);
  CHECK(client.loss(y, out, ctx).item<double>() == Approx(ClientAlgorithm().loss(y, out, ctx).item<double>()));
  ClientUpdate update;
  client.end(ctx, update);
  const auto& signals = update.payload.class_vectors.at("fedccl.signals");
  CHECK(signals.size() == 3);
  CHECK(signals.at(5).size(0) == 1);  // one sample: one cluster, the sample itself
  CHECK(signals.at(0).size(0) >= 1);
  CHECK(signals.at(0).size(0) <= 2);  // four samples: at most two first-neighbour clusters

  // With a global signal per class the L_global term adds a positive amount.
  task.round = 2;
  task.payload.class_vectors["fedccl.global"] = {{0, torch::ones({1, 128})}, {1, -torch::ones({1, 128})}};
  client.begin(ctx);
  out = model->forward(x);
  CHECK(client.loss(y, out, ctx).item<double>() > ClientAlgorithm().loss(y, out, ctx).item<double>() + 1e-4);
}
