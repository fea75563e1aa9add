#include "catch_torch.hpp"

#include <cmath>

#include "engine/algorithms/contrastive.hpp"
#include "engine/algorithms/fedskc.hpp"
#include "engine/compose/loader.hpp"
#include "engine/core/error.hpp"

using namespace drift;
// Its own namespace: FedSC and FedSKC name their types alike, and a unity build may put both
// test files in one translation unit.
namespace fedskc_tests {
using namespace drift::fedskc;

namespace {

// The classes a knowledge matrix holds (a braced list alone would also fit LibTorch 2.x's Tensor).
using Classes = std::vector<std::int64_t>;

ClientUpdate knowledge_update(std::uint32_t id, std::uint64_t n, double w, Knowledge k) {
  ClientUpdate u;
  u.client_id = id;
  u.num_samples = n;
  u.weights = {{"w", torch::full({1}, w, torch::kFloat64)}};
  for (auto& [c, v] : k) u.payload.class_vectors["knowledge"][c] = v.to(torch::kFloat32).unsqueeze(0);
  return u;
}

torch::Tensor row(std::initializer_list<double> v) { return torch::tensor(std::vector<double>(v), torch::kFloat64); }

}  // namespace

TEST_CASE("multi-positive InfoNCE against a hand-computed value, stable at tau 0.01", "[algorithms][contrastive]") {
  // -log((e^1 + e^0.5) / (e^1 + e^0.5 + e^0)) = log(1 + 1 / (e + e^0.5))
  auto sims = torch::tensor({{1.0, 0.5, 0.0}, {0.2, 0.1, 0.3}}, torch::requires_grad());
  auto pos = torch::tensor({{true, true, false}, {false, false, false}});
  auto loss = multi_positive_info_nce(sims, pos, 1.0);
  CHECK(loss[0].item<double>() == Approx(std::log(1.0 + 1.0 / (std::exp(1.0) + std::exp(0.5)))));
  CHECK(loss[1].item<double>() == 0.0);  // no positive: sits out
  loss.sum().backward();
  CHECK(torch::isfinite(sims.grad()).all().item<bool>());
  CHECK(sims.grad()[1].abs().sum().item<double>() == 0.0);

  auto sharp = torch::tensor({{1.0, -1.0, 0.99}}, torch::requires_grad());
  auto l = multi_positive_info_nce(sharp, torch::tensor({{false, true, false}}), 0.01);
  CHECK(std::isfinite(l.item<double>()));
  // lse(100, -100, 99) + 100 = 200 + log(1 + e^-1)
  CHECK(l.item<double>() == Approx(200.0 + std::log(1.0 + std::exp(-1.0))));
  l.sum().backward();
  CHECK(torch::isfinite(sharp.grad()).all().item<bool>());
}

TEST_CASE("FedSKC knowledge merge: each client with its M nearest, then the mean (Eq. 1)", "[algorithms][fedskc]") {
  const auto rows = torch::stack({row({0, 0}), row({1, 0}), row({5, 0})});
  // M = 1: [0,0]+[1,0] -> [0.5,0]; [1,0]+[0,0] -> [0.5,0]; [5,0]+[1,0] -> [3,0]; mean [4/3, 0].
  CHECK(torch::allclose(merge_class_knowledge(rows, 1), row({4.0 / 3.0, 0})));
  // M = 2 (everyone): every smoothed row is the mean [2, 0].
  CHECK(torch::allclose(merge_class_knowledge(rows, 2), row({2, 0})));
  // A class held by one client is that client's knowledge.
  CHECK(torch::allclose(merge_class_knowledge(torch::stack({row({3, 1})}), 1), row({3, 1})));
  // Ties go to the lower index: row 0 is as close to row 1 as to row 2 and takes row 1.
  // [0]+[1] -> 0.5; [1]+[0] -> 0.5; [-1]+[0] -> -0.5; mean 1/6.
  const auto tie = torch::stack({row({0}), row({1}), row({-1})});
  CHECK(merge_class_knowledge(tie, 1).item<double>() == Approx(1.0 / 6.0));
}

TEST_CASE("FedSKC GDA weights (Eq. 4), raw counts saturate, zero discrepancies", "[algorithms][fedskc]") {
  // fraction: x = b - a d = [0.25 - 0.25, 0.75 - 2.25] = [0, -1.5].
  const auto e = gda_weights({1.0, 3.0}, {10.0, 30.0}, false);
  const double s0 = 0.5, s1 = 1.0 / (1.0 + std::exp(1.5));
  CHECK(e[0] == Approx(s0 / (s0 + s1)));
  CHECK(e[1] == Approx(s1 / (s0 + s1)));
  // raw: sigmoid(10 + 0) and sigmoid(30 - 1.5) are both ~1: uniform weights.
  const auto raw = gda_weights({1.0, 3.0}, {10.0, 30.0}, true);
  CHECK(raw[0] == Approx(0.5).epsilon(1e-4));
  CHECK(raw[1] == Approx(0.5).epsilon(1e-4));
  // sum d = 0 (a single participant per class, identical knowledge): a_k = 0.
  const auto flat = gda_weights({0.0, 0.0}, {1.0, 3.0}, false);
  const double f0 = 1.0 / (1.0 + std::exp(-0.25)), f1 = 1.0 / (1.0 + std::exp(-0.75));
  CHECK(flat[0] == Approx(f0 / (f0 + f1)));
}

TEST_CASE("FedSKC GPR: variance sums, coefficient and the literal and convex updates (Eq. 5)", "[algorithms][fedskc]") {
  const Knowledge k = {{0, row({1, 2, 3})}, {1, row({0, 0, 4})}};
  // population: 2/3 + 32/9 = 38/9; unbiased: 1 + 16/3.
  CHECK(knowledge_variance(k, {0, 1}, false) == Approx(38.0 / 9.0));
  CHECK(knowledge_variance(k, {0, 1}, true) == Approx(1.0 + 16.0 / 3.0));
  CHECK(knowledge_variance(k, {0}, false) == Approx(2.0 / 3.0));

  NamedTensors prev = {{"w", torch::tensor({1.0f})},
                       {"bn.running_mean", torch::tensor({1.0f})},
                       {"bn.num_batches_tracked", torch::tensor({std::int64_t{5}})}};
  NamedTensors literal = {{"w", torch::tensor({2.0f})},
                          {"bn.running_mean", torch::tensor({2.0f})},
                          {"bn.num_batches_tracked", torch::tensor({std::int64_t{7}})}};
  auto convex = clone(literal);
  auto state = clone(literal);
  apply_gpr(literal, prev, 0.5, 0.9, false, false);
  CHECK(literal[0].value.item<double>() == Approx(0.9 * 2.0 + 0.1 * 0.5 * (1.0 - 2.0)));  // 1.75
  CHECK(literal[1].value.item<double>() == 2.0);  // buffers untouched by default
  apply_gpr(convex, prev, 0.5, 0.9, true, false);
  CHECK(convex[0].value.item<double>() == Approx(1.95));
  apply_gpr(state, prev, 0.5, 0.9, false, true);
  CHECK(state[1].value.item<double>() == Approx(1.75));
  CHECK(state[2].value.item<std::int64_t>() == 7);  // integers never
}

TEST_CASE("FedSKC server: knowledge, FedAvg weights and GPR over two rounds by hand", "[algorithms][fedskc]") {
  ServerOptions o;
  o.gda = false;
  o.beta = 0.9;
  o.gpr_rho_limit = 0.0;  // the literal, unbounded rho
  Server server(o);
  CHECK(server.broadcast(1).class_vectors.empty());
  NamedTensors global = {{"w", torch::zeros({1}, torch::kFloat64)}};
  // Round 1: knowledge [0,0,3] twice (variance 2); model (10*1 + 30*3)/40 = 2.5; no GPR yet.
  server.aggregate(
      global,
      {knowledge_update(0, 10, 1.0, {{0, row({0, 0, 3})}}), knowledge_update(1, 30, 3.0, {{0, row({0, 0, 3})}})}, {1});
  CHECK(global[0].value.item<double>() == Approx(2.5));
  CHECK(std::isnan(server.last_rho()));
  // Round 2: knowledge [0,0,6] (variance 8): rho = (8 - 2) / 2 = 3; FedAvg gives 4;
  // GPR: 0.9 * 4 + 0.1 * 3 * (2.5 - 4) = 3.15.
  server.aggregate(
      global,
      {knowledge_update(0, 10, 4.0, {{0, row({0, 0, 6})}}), knowledge_update(1, 30, 4.0, {{0, row({0, 0, 6})}})}, {2});
  CHECK(server.last_rho() == Approx(3.0));
  CHECK(global[0].value.item<double>() == Approx(3.15));
  CHECK(torch::allclose(server.broadcast(3).class_vectors.at("knowledge").at(0), torch::tensor({{0.0f, 0.0f, 6.0f}})));
}

// The paper preset's divergence: after a round whose knowledge is nearly flat (near-uniform
// logits, as early in training), rho is huge and the literal step throws the model far past
// both the new and the previous one; the default limit keeps |rho| <= 1.
TEST_CASE("FedSKC GPR: rho after nearly flat knowledge is bounded by gpr_rho_limit", "[algorithms][fedskc]") {
  auto two_rounds = [](double limit) {
    ServerOptions o;
    o.gda = false;
    o.beta = 0.95;
    o.gpr_rho_limit = limit;
    Server server(o);
    NamedTensors global = {{"w", torch::zeros({1}, torch::kFloat64)}};
    // Round 1: knowledge [0, 0, 0.003] (variance 2e-6); model 1. Round 2: [0, 0, 3] (variance 2); model 2.
    server.aggregate(global, {knowledge_update(0, 10, 1.0, {{0, row({0, 0, 0.003})}})}, {1});
    server.aggregate(global, {knowledge_update(0, 10, 2.0, {{0, row({0, 0, 3})}})}, {2});
    return std::make_pair(server.last_rho(), global[0].value.item<double>());
  };
  const auto [rho, unbounded] = two_rounds(0.0);
  CHECK(rho == Approx(999999.0));
  // 0.95 * 2 + 0.05 * 999999 * (1 - 2): about -50000, far outside [1, 2].
  CHECK(unbounded == Approx(0.95 * 2.0 - 0.05 * 999999.0));
  const auto [same_rho, bounded] = two_rounds(1.0);
  CHECK(same_rho == Approx(999999.0));          // reported as computed
  CHECK(bounded == Approx(0.95 * 2.0 - 0.05));  // rho applied as 1: 1.85
}

TEST_CASE("FedSKC server: GDA weights the models, stale classes are kept or dropped", "[algorithms][fedskc]") {
  ServerOptions o;
  o.gpr = false;
  o.gda_count = GdaCount::fraction;
  Server server(o);
  NamedTensors global = {{"w", torch::zeros({1}, torch::kFloat64)}};
  // Class 0: [0] and [2] -> c~ = [1]; d = [1, 1] -> a = [0.5, 0.5]; b = [0.25, 0.75];
  // x = [0.25 - 0.5, 0.75 - 0.5]; class 1 only at client 1: c~ = its own, no discrepancy.
  server.aggregate(
      global,
      {knowledge_update(0, 10, 0.0, {{0, row({0})}}), knowledge_update(1, 30, 1.0, {{0, row({2})}, {1, row({7})}})},
      {1});
  const double e0 = 1.0 / (1.0 + std::exp(0.25)), e1 = 1.0 / (1.0 + std::exp(-0.25));
  CHECK(server.last_weights()[0] == Approx(e0 / (e0 + e1)));
  CHECK(global[0].value.item<double>() == Approx(e1 / (e0 + e1)));
  // Round 2 has class 0 only: class 1 keeps its knowledge (keep_stale), or is dropped.
  server.aggregate(global, {knowledge_update(2, 10, 0.0, {{0, row({5})}})}, {2});
  CHECK(server.knowledge().at(1).item<double>() == 7.0);
  CHECK(server.knowledge().at(0).item<double>() == 5.0);
  o.keep_stale = false;
  Server forgetful(o);
  forgetful.aggregate(global, {knowledge_update(1, 30, 1.0, {{0, row({2})}, {1, row({7})}})}, {1});
  forgetful.aggregate(global, {knowledge_update(2, 10, 0.0, {{0, row({5})}})}, {2});
  CHECK(forgetful.knowledge().count(1) == 0);
}

TEST_CASE("FedSKC LCL against hand-computed values: paper, positive twice, absent classes, U", "[algorithms][fedskc]") {
  const auto knowledge = torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}});
  ClientOptions paper;
  paper.tau = 0.5;
  // cos = [1, 0], /tau = [2, 0]: -log(e^2 / (e^2 + 1)) = log(1 + e^-2).
  const auto l = torch::tensor({{1.0f, 0.0f}});
  const auto y0 = torch::tensor({std::int64_t{0}});
  CHECK(lcl_loss(l, y0, knowledge, Classes{0, 1}, {}, paper).item<double>() == Approx(std::log(1.0 + std::exp(-2.0))));
  ClientOptions twice = paper;
  twice.positive_twice = true;
  // -log(e^2 / (e^2 + e^2 + 1)) = log(2 + e^-2).
  CHECK(lcl_loss(l, y0, knowledge, Classes{0, 1}, {}, twice).item<double>() == Approx(std::log(2.0 + std::exp(-2.0))));
  // Only class 0 has knowledge; a class-1 sample sits out (paper) or is its own positive.
  const auto y1 = torch::tensor({std::int64_t{1}});
  const auto only0 = knowledge.slice(0, 0, 1);
  CHECK(lcl_loss(torch::tensor({{0.0f, 1.0f}}), y1, only0, Classes{0}, {}, paper).item<double>() == 0.0);
  ClientOptions self = paper;
  self.self_positive = true;
  // positive 1/tau = 2, candidates [cos([0,1],[1,0]) / tau] = [0]: log(1 + e^-2).
  CHECK(lcl_loss(torch::tensor({{0.0f, 1.0f}}), y1, only0, Classes{0}, {}, self).item<double>() ==
        Approx(std::log(1.0 + std::exp(-2.0))));
  // U = [2, 1], tau = 1: s = [1/2, 0] -> log(1 + e^-0.5). Batch mean over two samples, one skipped.
  ClientOptions unit = paper;
  unit.tau = 1.0;
  CHECK(lcl_loss(l, y0, knowledge, Classes{0, 1}, torch::tensor({2.0f, 1.0f}), unit).item<double>() ==
        Approx(std::log(1.0 + std::exp(-0.5))));
  // Three classes, knowledge of 0 and 1: the class-2 sample sits out but counts in the mean.
  const auto pair =
      lcl_loss(torch::tensor({{1.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 0.0f}}), torch::tensor(std::vector<std::int64_t>{0, 2}),
               torch::tensor({{1.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 0.0f}}), Classes{0, 1}, {}, paper);
  CHECK(pair.item<double>() == Approx(std::log(1.0 + std::exp(-2.0)) / 2.0));
  // Finite with a gradient at tau = 0.01.
  ClientOptions sharp = paper;
  sharp.tau = 0.01;
  auto logits = torch::tensor({{10.0f, -3.0f}, {-2.0f, 4.0f}}, torch::requires_grad());
  auto loss = lcl_loss(logits, torch::tensor({std::int64_t{1}, std::int64_t{0}}), knowledge, Classes{0, 1}, {}, sharp);
  CHECK(std::isfinite(loss.item<double>()));
  loss.backward();
  CHECK(torch::isfinite(logits.grad()).all().item<bool>());
}

TEST_CASE("FedSKC client uploads SiLU of the mean logits of each local class after training", "[algorithms][fedskc]") {
  auto model = make_model("small-cnn", {1, 28, 28}, 10, 5);
  Dataset data;
  data.images = torch::randn({6, 1, 28, 28});
  data.labels = torch::tensor(std::vector<std::int64_t>{2, 2, 7, 2, 7, 2});
  data.num_classes = 10;
  const std::vector<std::int64_t> indices = {0, 1, 2, 3, 4};  // sample 5 is another client's
  TrainingTask task;
  task.weights = state_of(*model);
  Payload state;
  ClientContext ctx{3, task, state, *model, &data, &indices};
  ClientOptions o;
  o.normalization = Normalization::batch;
  o.knowledge_pass = KnowledgePass::after;
  Client client(o);
  client.begin(ctx);
  ClientUpdate u;
  client.end(ctx, u);
  model->eval();
  const auto logits = model->forward(data.images.slice(0, 0, 5)).logits.detach();
  const auto mean2 = logits.index({torch::tensor(std::vector<std::int64_t>{0, 1, 3})}).mean(0);
  const auto& up = u.payload.class_vectors.at("knowledge");
  REQUIRE(up.size() == 2);
  CHECK(torch::allclose(up.at(2)[0], mean2 * torch::sigmoid(mean2), 1e-5, 1e-6));
  const auto mean7 = logits.index({torch::tensor(std::vector<std::int64_t>{2, 4})}).mean(0);
  CHECK(torch::allclose(up.at(7)[0], mean7 * torch::sigmoid(mean7), 1e-5, 1e-6));
}

TEST_CASE("FedSKC presets supply defaults, explicit keys win, bad parameters are refused",
          "[algorithms][fedskc][scenario]") {
  const std::string base =
      "[federation]\nclients = 10\n[sampler]\nclients_per_round = 4\n[algorithm]\nname = \"fedskc\"\n";
  const auto paper = parse_scenario(base, "s.toml");
  CHECK(paper.algorithm_params.string("preset") == "paper");
  CHECK(paper.algorithm_params.number("beta") == 0.95);
  CHECK(paper.algorithm_params.boolean("silu"));
  const auto ref = parse_scenario(base + "preset = \"reference\"\n", "s.toml");
  CHECK(ref.algorithm_params.number("beta") == 0.99);
  CHECK_FALSE(ref.algorithm_params.boolean("gda"));
  CHECK(ref.algorithm_params.string("normalization") == "none");
  CHECK_THAT(ref.resolved_toml, Catch::Contains("positive_twice = true"));
  const auto ablation = parse_scenario(base + "preset = \"reference\"\nbeta = 0.5\ngpr = false\n", "s.toml");
  CHECK(ablation.algorithm_params.number("beta") == 0.5);
  CHECK_FALSE(ablation.algorithm_params.boolean("gpr"));
  CHECK(ablation.algorithm_params.number("warmup_rounds") == 100.0);

  auto error_of = [&](const std::string& extra) {
    try {
      parse_scenario(base + extra, "s.toml");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of("preset = \"papr\"\n"), Catch::Contains("(did you mean 'paper'?)"));
  CHECK_THAT(error_of("tau = 0\n"), Catch::Contains("algorithm.tau must be > 0"));
  CHECK_THAT(error_of("beta = 1.5\n"), Catch::Contains("algorithm.beta must be <= 1"));
  CHECK_THAT(error_of("M = 4\n"),
             Catch::Contains("algorithm.M must be smaller than the clients aggregated per round (4)"));
  CHECK_THAT(error_of("lcll = true\n"), Catch::Contains("unknown key 'algorithm.lcll'"));
  CHECK_THAT(error_of("normalization = \"dataset2\"\n"), Catch::Contains("dataset"));
}

}  // namespace fedskc_tests
