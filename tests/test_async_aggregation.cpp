// The aggregation seam (docs/algorithms.md#aggregation): the asynchronous schedules decide when
// and how weights combine, the scenario's server half what the aggregate is. Hand-computed on
// one-parameter models.
#include "catch_torch.hpp"

#include <cmath>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/fedskc.hpp"
#include "engine/compose/loader.hpp"
#include "engine/sim/async_aggregation.hpp"

using namespace drift;

namespace {

Scenario fedbuff_scenario(const std::string& algorithm) {
  return parse_scenario(
      "[simulation]\nmode = \"fedbuff\"\n[async]\nbuffer_size = 2\nserver_lr = 1.0\n"
      "[algorithm]\nname = \"" +
          algorithm + "\"\n",
      "fedbuff.toml");
}

std::unique_ptr<ServerAlgorithm> server_of(const Scenario& s) {
  FederationShape shape;
  shape.num_clients = 10;
  shape.cohort = 2;
  return find_algorithm(s.algorithm)->make_server(s.algorithm_params, shape);
}

NamedTensors model(double w) { return {{"w", torch::full({1}, w, torch::kFloat64)}}; }

ClientUpdate update(std::uint32_t id, double w) {
  ClientUpdate u;
  u.client_id = id;
  u.num_samples = 10;
  u.weights = model(w);
  return u;
}

double value(const NamedTensors& t) { return t.front().value.item<double>(); }

// Global 1. Client 3 trained from the current model (staleness 0) to 3; client 1 from an older
// model 0 (staleness 1) to 2. FedBuff's step with lr 1:
//   x = 1 + (1 * (3 - 1) + (2 - 0) / sqrt(2)) / 2 = 2 + 1 / sqrt(2).
const double kFedBuffModel = 2.0 + 1.0 / std::sqrt(2.0);

void feed_two(AsyncAggregation& a) {
  CHECK_FALSE(a.add(update(3, 3.0), model(1.0), 0, 1));  // the buffer holds 1 of 2
  CHECK(a.add(update(1, 2.0), model(0.0), 1, 1));
}

// Records what the schedule hands the server half.
class Spy final : public ServerAlgorithm {
 public:
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput& in) override {
    for (const auto& u : updates) clients.push_back(u.client_id);
    for (const auto& u : updates)
      if (!u.weights.empty()) weights.push_back(value(u.weights));
    input = in;
    global = updates.front().weights;
  }
  void archive(StateArchive&) override {}
  Payload broadcast(std::uint32_t round) override {
    Payload p;
    p.tensors["round"] = torch::full({1}, static_cast<double>(round));
    return p;
  }
  std::vector<std::uint32_t> clients;
  std::vector<double> weights;
  AggregationInput input;
};

}  // namespace

TEST_CASE("FedBuff with fedavg: the staleness-weighted mean delta step, exactly", "[async][aggregation]") {
  const auto s = fedbuff_scenario("fedavg");
  AsyncAggregation a(s, model(1.0), server_of(s));
  feed_two(a);
  CHECK(value(*a.global()) == kFedBuffModel);  // bit for bit: fedavg takes the schedule's model
  CHECK(a.version() == 1);
  const auto applied = a.take_applied();
  CHECK(applied.staleness == std::vector<std::uint64_t>{0, 1});  // arrival order
}

TEST_CASE("FedBuff hands the server half the buffered updates by client id, with staleness and version",
          "[async][aggregation]") {
  const auto s = fedbuff_scenario("fedavg");
  auto spy = std::make_unique<Spy>();
  auto* seen = spy.get();
  AsyncAggregation a(s, model(1.0), std::move(spy));
  a.add(update(5, 1.0), model(1.0), 0, 1);  // a first aggregation: version 1
  a.add(update(6, 1.0), model(1.0), 0, 1);
  seen->clients.clear();
  seen->weights.clear();
  CHECK_FALSE(a.add(update(3, 3.0), model(1.0), 0, 2));
  CHECK(a.add(update(1, 2.0), model(0.0), 1, 2));
  CHECK(seen->clients == std::vector<std::uint32_t>{1, 3});
  CHECK(seen->input.staleness == std::vector<std::uint64_t>{1, 0});
  CHECK(seen->input.pulled_version == std::vector<std::uint64_t>{0, 1});
  CHECK(seen->input.round == 2);
  // The updates carry the schedule's model, not their own weights.
  CHECK(seen->weights == std::vector<double>{kFedBuffModel, kFedBuffModel});
  CHECK(a.broadcast(2).tensors.at("round").item<double>() == 2.0);
}

TEST_CASE("FedBuff with fedadam: Adam steps along the schedule's model", "[async][aggregation]") {
  const auto s = fedbuff_scenario("fedadam");
  AsyncAggregation a(s, model(1.0), server_of(s));
  feed_two(a);
  // delta = x_fedbuff - 1; m = (1 - b1) delta; v = b2 tau^2 + (1 - b2) delta^2;
  // x = 1 + eta m / (sqrt(v) + tau), with the defaults eta 0.01, b1 0.9, b2 0.99, tau 1e-3.
  const double delta = kFedBuffModel - 1.0, tau = 1e-3;
  const double m = 0.1 * delta, v = 0.99 * tau * tau + 0.01 * delta * delta;
  CHECK(value(*a.global()) == Approx(1.0 + 0.01 * m / (std::sqrt(v) + tau)).epsilon(1e-12));
  const auto metrics = a.take_applied().metrics;
  CHECK(metrics.scalars.at("delta_norm") == Approx(delta).epsilon(1e-12));
}

TEST_CASE("FedBuff with fedskc: knowledge of the buffered clients is merged and broadcast", "[async][aggregation]") {
  const auto s = fedbuff_scenario("fedskc");
  AsyncAggregation a(s, model(1.0), server_of(s));
  CHECK(a.broadcast(1).class_vectors.empty());  // nothing known before the first aggregation
  auto u3 = update(3, 3.0), u1 = update(1, 2.0);
  u3.payload.class_vectors["knowledge"][0] = torch::tensor({{0.0f, 4.0f}});
  u1.payload.class_vectors["knowledge"][0] = torch::tensor({{2.0f, 0.0f}});
  CHECK_FALSE(a.add(u3, model(1.0), 0, 1));
  CHECK(a.add(u1, model(0.0), 1, 1));
  // M = 1: each row is averaged with its one neighbour, so the class knowledge is [1, 2].
  const auto knowledge = a.broadcast(2).class_vectors.at("knowledge").at(0);
  CHECK(torch::allclose(knowledge, torch::tensor({{1.0f, 2.0f}})));
  // GDA weights averaging two copies of the schedule's model land on it (up to rounding).
  CHECK(value(*a.global()) == Approx(kFedBuffModel).epsilon(1e-12));
  CHECK(a.take_applied().metrics.per_client.at("gda_weight").size() == 2);
}

TEST_CASE("FedAsync with fedavg mixes with a = alpha s(staleness), private models combine no weights",
          "[async][aggregation]") {
  auto s = parse_scenario(
      "[simulation]\nmode = \"fedasync\"\n[async]\nalpha = 0.5\nstaleness = \"polynomial\"\n"
      "staleness_a = 1.0\n",
      "fedasync.toml");
  AsyncAggregation a(s, model(1.0), server_of(s));
  CHECK(a.add(update(2, 5.0), model(0.0), 1, 1));
  // a = 0.5 * (1 + 1)^-1 = 0.25: 0.75 * 1 + 0.25 * 5 = 2.
  CHECK(value(*a.global()) == 2.0);

  auto spy = std::make_unique<Spy>();
  auto* seen = spy.get();
  AsyncAggregation private_models(s, NamedTensors{}, std::move(spy));
  ClientUpdate knowledge_only;
  knowledge_only.client_id = 4;
  CHECK(private_models.add(knowledge_only, NamedTensors{}, 0, 1));
  CHECK(seen->clients == std::vector<std::uint32_t>{4});
  CHECK(private_models.global()->empty());
  CHECK(private_models.version() == 1);
}
