#include "catch_torch.hpp"

#include <cmath>

#include "engine/algorithms/fedsc.hpp"
#include "engine/compose/loader.hpp"
#include "engine/core/error.hpp"

using namespace drift;
// Its own namespace: FedSC and FedSKC name their types alike, and a unity build may put both
// test files in one translation unit.
namespace fedsc_tests {
using namespace drift::fedsc;

namespace {

torch::Tensor rows(std::vector<std::vector<double>> v) {
  std::vector<torch::Tensor> out;
  for (auto& r : v) out.push_back(torch::tensor(r, torch::kFloat64));
  return torch::stack(out);
}

torch::Tensor labels(std::vector<std::int64_t> v) { return torch::tensor(v); }

}  // namespace

TEST_CASE("FedSC relational prototypes under both neighbour rules", "[algorithms][fedsc]") {
  // p = [1,0], [0,1], [1,1]; global = mean = [2/3, 2/3]: angles 45, 45, 0 degrees.
  const auto p = rows({{1, 0}, {0, 1}, {1, 1}});
  const auto g = p.mean(0);
  // angle rule, M = 1: rows 0 and 1 pair up (difference 0); row 2 ties 45/45 and takes row 0.
  CHECK(
      torch::allclose(relational_prototypes(p, g, 1, NeighbourRule::angle), rows({{0.5, 0.5}, {0.5, 0.5}, {1, 0.5}})));
  // global rule, M = 1: rows 0 and 1 take row 2 (angle 0); row 2 ties and takes row 0.
  CHECK(torch::allclose(relational_prototypes(p, g, 1, NeighbourRule::global), rows({{1, 0.5}, {0.5, 1}, {1, 0.5}})));
  // One holder: its own prototype.
  CHECK(torch::allclose(relational_prototypes(rows({{3, 4}}), torch::tensor({3.0, 4.0}), 2, NeighbourRule::angle),
                        rows({{3, 4}})));
}

TEST_CASE("FedSC discrepancy from uniform and consistency weights", "[algorithms][fedsc]") {
  // q = [0.75, 0.25]: sqrt(0.5 * (0.25^2 + 0.25^2)) = 0.25; a balanced client has 0.
  CHECK(label_discrepancy(torch::tensor({3.0f, 1.0f})) == Approx(0.25));
  CHECK(label_discrepancy(torch::tensor({2.0f, 2.0f})) == 0.0);
  // d = [0.25, 0], N = [4, 4]: a = [1, 0], b = [0.5, 0.5] -> sigmoid(-0.5), sigmoid(0.5), normalised.
  const auto e = consistency_weights({0.25, 0.0}, {4.0, 4.0});
  const double s0 = 1.0 / (1.0 + std::exp(0.5)), s1 = 1.0 / (1.0 + std::exp(-0.5));
  CHECK(e[0] == Approx(s0 / (s0 + s1)));
  CHECK(e[1] == Approx(s1 / (s0 + s1)));
  // Everyone balanced: a_k = 0, weights by b_k only.
  const auto flat = consistency_weights({0.0, 0.0}, {1.0, 3.0});
  const double f0 = 1.0 / (1.0 + std::exp(-0.25)), f1 = 1.0 / (1.0 + std::exp(-0.75));
  CHECK(flat[1] == Approx(f1 / (f0 + f1)));
}

TEST_CASE("FedSC server: consistent prototypes weighted per class, renormalised over holders", "[algorithms][fedsc]") {
  ServerOptions o;
  o.neighbours = 1;
  Server server(o);
  auto update = [](std::uint32_t id, std::vector<float> counts, std::map<std::uint32_t, torch::Tensor> protos) {
    ClientUpdate u;
    u.client_id = id;
    u.num_samples = 4;
    u.weights = {{"w", torch::zeros({1})}};
    u.payload.tensors["label_counts"] = torch::tensor(counts);
    u.payload.class_vectors["prototypes"] = std::move(protos);
    return u;
  };
  NamedTensors global = {{"w", torch::zeros({1})}};
  // Client 0 (counts [3,1], d = 0.25) and client 1 (balanced, d = 0) both hold class 0;
  // class 1 only at client 1. With two holders and M = 1 both relational rows are the mean [1, 1].
  server.aggregate(global,
                   {update(0, {3, 1}, {{0, torch::tensor({{0.0f, 2.0f}})}}),
                    update(1, {2, 2}, {{0, torch::tensor({{2.0f, 0.0f}})}, {1, torch::tensor({{5.0f, 5.0f}})}})},
                   {1});
  CHECK(torch::allclose(server.relational().at(0), rows({{1, 1}, {1, 1}})));
  CHECK(torch::allclose(server.consistent().at(0), torch::tensor({1.0, 1.0}, torch::kFloat64)));
  CHECK(
      torch::allclose(server.consistent().at(1), torch::tensor({5.0, 5.0}, torch::kFloat64)));  // one holder: weight 1
  o.merge = false;
  Server raw(o);
  raw.aggregate(global,
                {update(0, {3, 1}, {{0, torch::tensor({{0.0f, 2.0f}})}}),
                 update(1, {2, 2}, {{0, torch::tensor({{2.0f, 0.0f}})}})},
                {1});
  const double s0 = 1.0 / (1.0 + std::exp(0.5)), s1 = 1.0 / (1.0 + std::exp(-0.5));
  const double w0 = s0 / (s0 + s1);
  // cc = w0 [0, 2] + (1 - w0) [2, 0]
  CHECK(torch::allclose(raw.consistent().at(0), torch::tensor({2.0 * (1.0 - w0), 2.0 * w0}, torch::kFloat64)));
  const auto sent = raw.broadcast(2);
  CHECK(sent.class_vectors.at("relational").at(0).size(0) == 2);
  CHECK(sent.class_vectors.at("consistent").at(0).sizes() == torch::IntArrayRef({1, 2}));
}

TEST_CASE("FedSC RPCL and CPDR against hand-computed values", "[algorithms][fedsc]") {
  ClientOptions paper;
  paper.tau = 1.0;
  // cos = [1, 0, 1/sqrt2]; positives columns 0 and 2: log(1 + 1 / (e + e^0.7071)).
  const auto bank = torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}, {1.0f, 1.0f}});
  const auto z = torch::tensor({{1.0f, 0.0f}});
  const double expected = std::log(1.0 + 1.0 / (std::exp(1.0) + std::exp(std::sqrt(0.5))));
  CHECK(rpcl_loss(z, labels({0}), bank, labels({0, 1, 0}), {}, paper).item<double>() == Approx(expected));
  // Released code: self positive (1/tau), negatives pooled over the batch's labels.
  ClientOptions ref = paper;
  ref.self_positive = true;
  ref.pooled_negatives = true;
  const auto two = torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}});
  // Both prototypes are negatives for both rows: log(e + e + 1) - 1.
  CHECK(rpcl_loss(two, labels({0, 1}), torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}}), labels({0, 1}), {}, ref)
            .item<double>() == Approx(std::log(2.0 * std::exp(1.0) + 1.0) - 1.0));
  ref.pooled_negatives = false;  // own-class prototype is no negative: log(e + 1) - 1
  CHECK(rpcl_loss(two, labels({0, 1}), torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}}), labels({0, 1}), {}, ref)
            .item<double>() == Approx(std::log(std::exp(1.0) + 1.0) - 1.0));
  // CPDR: mean square to the consistent prototype, (1 + 4) / 2, batch mean; class 1 has none.
  const auto cc = torch::tensor({{0.0f, 0.0f}, {9.0f, 9.0f}});
  const auto has = torch::tensor({true, false});
  CHECK(cpdr_loss(torch::tensor({{1.0f, 2.0f}, {3.0f, 3.0f}}), labels({0, 1}), cc, has).item<double>() == Approx(1.25));
  // Finite at tau 0.01 with a gradient.
  ClientOptions sharp = paper;
  sharp.tau = 0.01;
  auto f = torch::tensor({{4.0f, -1.0f}, {0.5f, 2.0f}}, torch::requires_grad());
  auto l = rpcl_loss(f, labels({1, 0}), bank, labels({0, 1, 0}), {}, sharp);
  l.backward();
  CHECK(std::isfinite(l.item<double>()));
  CHECK(torch::isfinite(f.grad()).all().item<bool>());
}

TEST_CASE("FedSC presets and validation", "[algorithms][fedsc][scenario]") {
  const std::string base =
      "[federation]\nclients = 10\n[sampler]\nclients_per_round = 2\n[algorithm]\nname = \"fedsc\"\n";
  CHECK_THAT(std::string([&] {
               try {
                 parse_scenario(base, "s.toml");
               } catch (const UserError& e) {
                 return std::string(e.what());
               }
               return std::string();
             }()),
             Catch::Contains("algorithm.M must be smaller than the clients aggregated per round (2), got 2"));
  const auto ref = parse_scenario(base + "preset = \"reference\"\nM = 1\n", "s.toml");
  CHECK_FALSE(ref.algorithm_params.boolean("cpdr"));
  CHECK(ref.algorithm_params.boolean("pooled_negatives"));
  CHECK(ref.algorithm_params.integer("M") == 1);
}

}  // namespace fedsc_tests
