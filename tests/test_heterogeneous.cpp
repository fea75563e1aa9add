// Heterogeneous FL: per-client architectures, private models kept in client state, the ETF
// head, FedKTL's client and server halves, the HtFL baselines' server steps, and where idle
// clients' state waits.
#include "catch_torch.hpp"
#include "scenario_error.hpp"

#include <unistd.h>

#include <filesystem>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/fedktl.hpp"
#include "engine/algorithms/head_exchange.hpp"
#include "engine/compose/client_models.hpp"
#include "engine/compose/federation_data.hpp"
#include "engine/compose/loader.hpp"
#include "engine/core/error.hpp"
#include "messages/codec.hpp"
#include "messages/state_store.hpp"

using namespace drift;

namespace {

const char* kHeterogeneous = R"(
seed = 5
[data]
max_train_samples = 600
max_test_samples = 200
client_test_fraction = 0.25
[federation]
clients = 4
rounds = 2
[sampler]
clients_per_round = 2
[model]
group = "cnn4, resnet4,mobilenetv2"
width = 8
[algorithm]
name = "fedktl"
server_epochs = 2
[training]
batch_size = 10
lr = 0.01
)";

using test::error_of;

std::map<std::uint32_t, torch::Tensor> one_hot_rows(std::int64_t classes, std::int64_t dim) {
  std::map<std::uint32_t, torch::Tensor> rows;
  for (std::int64_t c = 0; c < classes; ++c)
    rows[static_cast<std::uint32_t>(c)] = torch::eye(dim)[c % dim].unsqueeze(0);
  return rows;
}

// A federation over random images (no dataset files): 4 clients of 30 training samples and
// 10 held-out test samples each.
FederationData random_federation(const Scenario& s) {
  FederationData fed;
  auto train = std::make_shared<Dataset>();
  train->num_classes = 10;
  train->images = torch::randn({120, 1, 28, 28}, torch::TensorOptions().dtype(torch::kFloat32));
  train->labels = torch::arange(120, torch::kInt64).remainder(10);
  auto test = std::make_shared<Dataset>(*train);
  test->images = train->images.slice(0, 0, 40).flip(3).contiguous();
  test->labels = train->labels.slice(0, 0, 40).contiguous();
  fed.data = {train, test};
  for (std::int64_t k = 0; k < s.clients; ++k) {
    std::vector<std::int64_t> share;
    for (std::int64_t i = 0; i < 30; ++i) share.push_back(k * 30 + i);
    fed.partition.indices.push_back(share);
    fed.client_test_sizes.push_back(10);
  }
  return fed;
}

}  // namespace

TEST_CASE("model groups: assignment by cycle or list, and only for private-model algorithms", "[heterogeneous]") {
  const auto s = parse_scenario(kHeterogeneous, "s.toml");
  REQUIRE(s.model_group == std::vector<std::string>{"cnn4", "resnet4", "mobilenetv2"});
  CHECK(s.model == "cnn4");
  CHECK(s.feature_dim == 512);  // several architectures share FedKTL's d'
  CHECK(client_architecture(s, 0) == "cnn4");
  CHECK(client_architecture(s, 2) == "mobilenetv2");
  CHECK(client_architecture(s, 3) == "cnn4");
  const auto listed = parse_scenario(kHeterogeneous, "s.toml", {{"model.assignment", "[2, 2, 1, 0]"}});
  CHECK(client_architecture(listed, 0) == "mobilenetv2");
  CHECK(client_architecture(listed, 3) == "cnn4");

  std::string without_params = kHeterogeneous;
  without_params.erase(without_params.find("server_epochs = 2\n"), std::string("server_epochs = 2\n").size());
  CHECK_THAT(error_of(without_params, {{"algorithm.name", "\"fedavg\""}}),
             Catch::Contains("mixes architectures, but algorithm 'fedavg' averages weights"));
  CHECK_THAT(error_of(kHeterogeneous, {{"model.group", "\"cnn4,resnet5\""}}),
             Catch::Contains("unknown model 'resnet5'") && Catch::Contains("did you mean"));
  CHECK_THAT(error_of(kHeterogeneous, {{"model.assignment", "[0, 1]"}}), Catch::Contains("2 entries for 4 clients"));
  CHECK_THAT(error_of(kHeterogeneous, {{"model.assignment", "[0, 1, 3, 0]"}}), Catch::Contains("not an index"));
  CHECK_THAT(error_of(kHeterogeneous, {{"data.client_test_fraction", "0"}}),
             Catch::Contains("own test split: set data.client_test_fraction"));
  // Private models run under the asynchronous schedules too (docs/algorithms.md#aggregation).
  CHECK_NOTHROW(parse_scenario(kHeterogeneous, "h.toml", {{"simulation.mode", "\"fedbuff\""}}));
}

TEST_CASE("ETF head: cosines to a simplex shared by every client, common feature width", "[heterogeneous]") {
  ModelOptions o;
  o.head = HeadKind::etf;
  o.feature_dim = 512;
  o.shared_seed = 3;
  auto a = make_model("cnn4", {1, 28, 28}, 10, 1, o);
  auto b = make_model("resnet4", {1, 28, 28}, 10, 2, o);
  const auto x = torch::randn({4, 1, 28, 28});
  const auto out = a->forward(x);
  CHECK(out.features.size(1) == 512);
  CHECK(out.embedding.sizes() == torch::IntArrayRef({4, 10}));
  CHECK(out.logits.abs().max().item<double>() <= 1.0 + 1e-5);  // cosines
  CHECK(b->forward(x).features.size(1) == 512);                // resnet4 (64 wide) repeated to 512
  const auto etf_a = a->named_buffers()["head.etf"], etf_b = b->named_buffers()["head.etf"];
  CHECK(torch::equal(etf_a, etf_b));  // same ETF, different initialisations
  const auto head_a = a->named_parameters()["head.weight"], head_b = b->named_parameters()["head.weight"];
  CHECK_FALSE(torch::equal(head_a, head_b));
  // The cosine of every class vector with itself is 1 and with the others -1/(C-1).
  const auto gram = etf_a.t().matmul(etf_a);
  CHECK(gram[0][0].item<double>() == Approx(1.0).margin(1e-5));
  CHECK(gram[0][1].item<double>() == Approx(-1.0 / 9).margin(1e-5));
}

TEST_CASE("private models: weights live in the client's state and training resumes from them", "[heterogeneous]") {
  auto s = parse_scenario(kHeterogeneous, "s.toml");
  torch::manual_seed(1);
  const auto data = random_federation(s);
  ClientModels models(s, data, torch::kCPU);
  auto algorithm = find_algorithm(s.algorithm)->make_client(s.algorithm_params);
  TrainingTask task;
  task.round = 1;
  task.hyper = s.training;
  Payload state;
  const auto first = models.train(*algorithm, task, 2, state);
  CHECK(first.weights.empty());
  REQUIRE(first.personal.has_value());
  const auto [begin, end] = client_test_range(data, 2);
  CHECK(first.personal->begin == begin);
  CHECK(first.personal->end == end);
  CHECK(end - begin == static_cast<std::uint64_t>(data.client_test_sizes[2]));
  const auto initial = state_of(*make_architecture_model(s, *data.data.train, "mobilenetv2"));
  REQUIRE(state.tensors.count(private_weight_key(initial.front().name)) == 1);
  CHECK_FALSE(torch::equal(state.tensors.at(private_weight_key(initial.front().name)), initial.front().value));
  CHECK(first.payload.class_vectors.count(kKtlPrototypes) == 1);
  for (const auto& [c, row] : first.payload.class_vectors.at(kKtlPrototypes))
    CHECK(row.norm().item<double>() == Approx(1.0).margin(1e-5));  // normalised ETF-space prototypes

  // One generated pair only: the regression task is skipped (BatchNorm cannot train on one
  // sample) and training goes on.
  TrainingTask one_pair = task;
  one_pair.round = 2;
  one_pair.payload.tensors["ktl_images"] = torch::zeros({1, 1, 28, 28});
  one_pair.payload.tensors["ktl_latents"] = torch::zeros({1, 16});
  Payload scratch;
  CHECK(std::isfinite(models.train(*algorithm, one_pair, 0, scratch).metrics.loss));

  // Round 2 from the kept weights differs from round 2 from scratch.
  task.round = 2;
  Payload kept = state, fresh;
  const auto resumed = models.train(*algorithm, task, 2, kept);
  const auto restarted = models.train(*algorithm, task, 2, fresh);
  const auto key = private_weight_key(initial.front().name);
  CHECK_FALSE(torch::equal(kept.tensors.at(key), fresh.tensors.at(key)));
  CHECK(resumed.metrics.loss != restarted.metrics.loss);

  // A task that carries weights, or a state that holds part of a model, is refused.
  TrainingTask with_weights = task;
  with_weights.weights = initial;
  Payload any;
  CHECK_THROWS_AS(models.train(*algorithm, with_weights, 2, any), DecodeError);
  Payload partial = state;
  partial.tensors.erase(key);
  CHECK_THROWS_WITH(models.train(*algorithm, task, 2, partial), Catch::Contains("private state holds"));
}

TEST_CASE("FedKTL server: prototypes in, one client-ready image and latent per class out", "[heterogeneous][fedktl]") {
  FederationShape shape;
  shape.num_classes = 4;
  shape.input_shape = {1, 28, 28};
  shape.pixel_mean = 0.5;
  shape.pixel_std = 0.25;
  shape.seed = 9;
  FedKtlServerOptions o;
  o.alignment.epochs = 3;
  FedKtlServer server(o, random_generator(16, 32, 1), shape);
  CHECK(server.broadcast(1).tensors.empty());  // nothing to send before the first prototypes
  const auto before = server.centroids().clone();

  std::vector<ClientUpdate> updates(2);
  updates[0].payload.class_vectors[kKtlPrototypes] = {{0, torch::tensor({{1.0f, 0.f, 0.f, 0.f}})},
                                                      {1, torch::tensor({{0.f, 1.0f, 0.f, 0.f}})}};
  updates[1].payload.class_vectors[kKtlPrototypes] = {{1, torch::tensor({{0.f, 0.9f, 0.1f, 0.f}})},
                                                      {2, torch::tensor({{0.f, 0.f, 1.0f, 0.f}})}};
  NamedTensors none;
  server.aggregate(none, updates, {1});
  CHECK(none.empty());
  const auto p = server.broadcast(2);
  const auto& images = p.tensors.at("ktl_images");
  const auto& latents = p.tensors.at("ktl_latents");
  // Classes 0-2 were uploaded; class 3's random centroid is left out (docs/algorithms.md#fedktl).
  CHECK(images.sizes() == torch::IntArrayRef({3, 1, 28, 28}));
  CHECK(latents.sizes() == torch::IntArrayRef({3, 16}));
  CHECK(torch::equal(latents, server.centroids().slice(0, 0, 3)));
  // Normalised as the data: pixels in [0, 1] become [(0 - 0.5) / 0.25, (1 - 0.5) / 0.25].
  CHECK(images.min().item<double>() >= -2.0 - 1e-6);
  CHECK(images.max().item<double>() <= 2.0 + 1e-6);
  // Class 3 was never uploaded: its centroid keeps its N(0, 1) draw; the others moved.
  CHECK(torch::equal(server.centroids()[3], before[3]));
  CHECK_FALSE(torch::equal(server.centroids()[1], before[1]));

  FedKtlServerOptions keep = o;
  keep.unseen_classes = UnseenClasses::keep;  // the authors' code: all C pairs
  FedKtlServer all(keep, random_generator(16, 32, 1), shape);
  all.aggregate(none, updates, {1});
  CHECK(all.broadcast(2).tensors.at("ktl_images").size(0) == 4);

  FederationShape bad = shape;
  FedKtlServerOptions narrow;
  narrow.etf_dim = 2;  // below C - 1 = 3
  CHECK_THROWS_WITH(FedKtlServer(narrow, random_generator(16, 32, 1), bad), Catch::Contains("etf_dim = 2"));
}

TEST_CASE("LG-FedAvg averages heads by samples, FedGH trains its head on prototypes", "[heterogeneous]") {
  const auto* lg = find_algorithm("lg-fedavg");
  REQUIRE(lg != nullptr);
  CHECK(lg->private_models);
  FederationShape shape;
  shape.num_classes = 2;
  shape.seed = 4;
  auto server = lg->make_server(ParamSet{}, shape);
  std::vector<ClientUpdate> updates(2);
  updates[0].num_samples = 1;
  updates[0].payload.tensors["head.weight"] = torch::tensor({{1.0f, 2.0f}, {0.0f, 0.0f}});
  updates[0].payload.tensors["head.bias"] = torch::tensor({1.0f, 0.0f});
  updates[1].num_samples = 3;
  updates[1].payload.tensors["head.weight"] = torch::tensor({{5.0f, 6.0f}, {4.0f, 8.0f}});
  updates[1].payload.tensors["head.bias"] = torch::tensor({5.0f, 4.0f});
  NamedTensors none;
  server->aggregate(none, updates, {1});
  const auto head = server->broadcast(2).tensors;
  // (1 * w0 + 3 * w1) / 4
  CHECK(torch::allclose(head.at("head.weight"), torch::tensor({{4.0f, 5.0f}, {3.0f, 6.0f}})));
  CHECK(torch::allclose(head.at("head.bias"), torch::tensor({4.0f, 3.0f})));

  // The head goes into a model of matching width and is refused by one that does not fit.
  ModelOptions o;
  o.feature_dim = 2;
  auto model = make_model("small-cnn", {1, 28, 28}, 2, 1, o);
  Payload p;
  p.tensors = head;
  load_head(*model, p);
  CHECK(torch::equal(model->named_parameters()["head.weight"], head.at("head.weight")));
  auto other = make_model("small-cnn", {1, 28, 28}, 3, 1, o);
  CHECK_THROWS_AS(load_head(*other, p), DecodeError);

  // FedGH: two separable prototypes; after the server's steps the head classifies them.
  ParamSet gh;
  gh.set("server_lr", 0.5);
  gh.set("server_epochs", std::int64_t{50});
  auto fedgh = find_algorithm("fedgh")->make_server(gh, shape);
  std::vector<ClientUpdate> protos(1);
  protos[0].payload.class_vectors["prototypes"] = one_hot_rows(2, 2);
  fedgh->aggregate(none, protos, {1});
  const auto w = fedgh->broadcast(2).tensors;
  const auto logits = torch::eye(2).matmul(w.at("head.weight").t()) + w.at("head.bias");
  CHECK(torch::equal(logits.argmax(1), torch::tensor({0, 1}, torch::kInt64)));
  protos[0].payload.class_vectors["prototypes"][5] = torch::ones({1, 2});  // no class 5 in a 2-class federation
  CHECK_THROWS_WITH(fedgh->aggregate(none, protos, {2}), Catch::Contains("'prototypes' vector of an unknown class"));
}

TEST_CASE("client state waits in memory or on disk and comes back byte for byte", "[heterogeneous]") {
  const auto dir = std::filesystem::temp_directory_path() / ("drift-states-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  Payload state;
  state.tensors["model/x"] = torch::arange(6, torch::kFloat32);
  const auto buffer = msg::encode_client_state({7, state});
  for (const auto kind : {ClientStateStore::memory, ClientStateStore::disk}) {
    auto store = msg::make_state_store(kind, dir);
    CHECK_FALSE(store->load(7).has_value());
    store->save(7, buffer);
    const auto back = store->load(7);
    REQUIRE(back.has_value());
    CHECK(back->bytes() == buffer.bytes());
    CHECK(msg::decode_client_state(*back).client_id == 7);
  }
  CHECK(std::filesystem::exists(dir / "7.state"));
  CHECK_FALSE(std::filesystem::exists(dir / "7.state.partial"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("init_parameters draws a bare layer from the seed, not from torch's global generator", "[heterogeneous]") {
  auto draw = [](std::uint64_t seed, std::uint64_t global) {
    torch::manual_seed(global);
    torch::nn::Linear layer(4, 3);
    init_parameters(*layer, seed);
    return layer->weight.detach().clone();
  };
  CHECK(torch::equal(draw(1, 10), draw(1, 20)));
  CHECK_FALSE(torch::equal(draw(1, 10), draw(2, 10)));
}
