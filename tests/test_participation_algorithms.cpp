// The participation-robust server halves against the participation spec's test vectors
// (docs/algorithms.md#participation): 3 clients, a 2-parameter model, rounds 1-3 with
// participants {0}, {0, 1}, {1, 2}, and round 4 with nobody. Scenario A's changes do not
// depend on the model; scenario B's clients take one gradient step of size 1/2 towards their
// targets from the model they start from.
#include "catch_torch.hpp"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>

#include "engine/algorithms/algorithm.hpp"
#include "engine/core/error.hpp"
#include "engine/core/state_archive.hpp"

using namespace drift;

namespace {

using Pair = std::vector<double>;
using Change = std::function<Pair(std::uint32_t round, std::uint32_t client, const Pair& x)>;

const std::vector<std::vector<std::uint32_t>> kParticipants = {{0}, {0, 1}, {1, 2}, {}};

Pair pair_of(const NamedTensors& x) { return {x[0].value[0].item<double>(), x[0].value[1].item<double>()}; }

// Scenario A: the spec's table of changes.
Pair table_change(std::uint32_t round, std::uint32_t client, const Pair&) {
  static const std::map<std::pair<std::uint32_t, std::uint32_t>, Pair> changes = {
      {{1, 0}, {2, 0}}, {{2, 0}, {1, 1}}, {{2, 1}, {0, 4}}, {{3, 1}, {2, 2}}, {{3, 2}, {-3, 3}}};
  return changes.at({round, client});
}

// Scenario B: Delta = (c_i - x) / 2.
Pair towards_target(std::uint32_t, std::uint32_t client, const Pair& x) {
  static const std::vector<Pair> targets = {{4, 0}, {0, 4}, {-4, -4}};
  return {(targets[client][0] - x[0]) / 2, (targets[client][1] - x[1]) / 2};
}

std::unique_ptr<ServerAlgorithm> server(const std::string& name, std::vector<std::pair<std::string, ParamValue>> set) {
  ParamSet p;
  for (auto& [k, v] : set) p.set(k, v);
  FederationShape shape;
  shape.num_clients = 3;
  return find_algorithm(name)->make_server(p, shape);
}

// Rounds `from`..`to` (1-based) of the common setting, from the model `x`; the server model after
// each round. With `shares`, each round's ServerAlgorithm::shares as the drivers ask for them:
// after an aggregation, and after an empty round only when it moved the model.
std::vector<Pair> run_rounds(ServerAlgorithm& server, NamedTensors& x, const Change& change, std::uint32_t from = 1,
                             std::uint32_t to = 4, std::vector<ClientShares>* shares = nullptr) {
  std::vector<Pair> models;
  for (std::uint32_t round = from; round <= to; ++round) {
    std::vector<ClientUpdate> updates;
    for (auto client : kParticipants[round - 1]) {
      ClientUpdate u;
      u.client_id = client;
      u.num_samples = 1;
      // FedAWE's clients start from their own model; every other algorithm's from x.
      const auto* start = server.start_model(client);
      const auto& base = start != nullptr ? *start : x;
      const auto d = change(round, client, pair_of(base));
      u.weights = {{"w", base[0].value + torch::tensor(d, torch::kFloat64)}};
      updates.push_back(std::move(u));
    }
    bool moved = true;
    if (updates.empty())
      moved = server.aggregate_nothing(x, {round});
    else
      server.aggregate(x, updates, {round});
    if (shares != nullptr) shares->push_back(moved ? server.shares(updates) : ClientShares{});
    models.push_back(pair_of(x));
  }
  return models;
}

NamedTensors model_at(double a, double b) { return {{"w", torch::tensor({a, b}, torch::kFloat64)}}; }

std::vector<Pair> scenario_a(ServerAlgorithm& server) {
  auto x = model_at(1, -1);
  return run_rounds(server, x, table_change);
}

std::vector<Pair> scenario_b(ServerAlgorithm& server) {
  auto x = model_at(0, 0);
  return run_rounds(server, x, towards_target);
}

void check_models(const std::vector<Pair>& got, const std::vector<Pair>& want, double tolerance = 1e-12) {
  REQUIRE(got.size() >= want.size());
  for (std::size_t r = 0; r < want.size(); ++r) {
    INFO("after round " << r + 1);
    for (std::size_t k = 0; k < 2; ++k) CHECK(got[r][k] == Approx(want[r][k]).epsilon(tolerance).margin(tolerance));
  }
}

// Stopped after round 2, archived, restored into a fresh server: rounds 3 and 4 as uninterrupted.
void check_round_trip(const std::function<std::unique_ptr<ServerAlgorithm>()>& make) {
  auto straight = make();
  const auto want = scenario_a(*straight);
  auto first = make();
  auto x = model_at(1, -1);
  run_rounds(*first, x, table_change, 1, 2);
  auto out = StateArchive::writer();
  first->archive(out);
  auto second = make();
  auto in = StateArchive::reader(out.take(), "server");
  second->archive(in);
  in.expect_end();
  const auto rest = run_rounds(*second, x, table_change, 3, 4);
  check_models(rest, {want[2], want[3]});
}

}  // namespace

TEST_CASE("FedAvg over the participants and over all clients against the spec's vectors",
          "[algorithms][participation]") {
  check_models(scenario_a(*server("fedavg-participants", {})), {{3, -1}, {3.5, 1.5}, {3, 4}, {3, 4}});
  check_models(scenario_a(*server("fedavg-participants", {{"server_lr", 2.0}})), {{5, -1}, {6, 4}, {5, 9}, {5, 9}});
  check_models(scenario_a(*server("fedavg-all", {})),
               {{5.0 / 3, -1}, {2, 2.0 / 3}, {5.0 / 3, 7.0 / 3}, {5.0 / 3, 7.0 / 3}});
  check_models(scenario_b(*server("fedavg-participants", {})), {{2, 0}, {2, 1}, {0, 0.5}, {0, 0.5}});
  check_models(scenario_b(*server("fedavg-all", {})),
               {{2.0 / 3, 0}, {10.0 / 9, 2.0 / 3}, {2.0 / 27, 4.0 / 9}, {2.0 / 27, 4.0 / 9}});
}

TEST_CASE("FedAU against the spec's vectors, empty rounds booked", "[algorithms][participation][fedau]") {
  auto weights_of = [](ServerAlgorithm& s) { return s.metrics().per_client.at("fedau_weight"); };
  SECTION("K infinite, eta 1: weights read before each round is booked") {
    auto s = server("fedau", {{"cutoff", std::int64_t{100000}}});
    auto x = model_at(1, -1);
    std::vector<std::vector<double>> weights;
    for (std::uint32_t r = 1; r <= 3; ++r) {
      run_rounds(*s, x, table_change, r, r);
      weights.push_back(weights_of(*s));
    }
    check_models({pair_of(x)}, {{7.0 / 3, 3}});
    CHECK(weights == std::vector<std::vector<double>>{{1.0}, {1.0, 1.0}, {2.0, 1.0}});
    s->aggregate_nothing(x, {4});
    // Round 5 with everyone shows the weights it uses: 1, 3/2, 3.
    ClientUpdate u;
    u.weights = x;
    std::vector<ClientUpdate> all(3, u);
    for (std::uint32_t i = 0; i < 3; ++i) all[i].client_id = i;
    s->aggregate(x, all, {5});
    CHECK(weights_of(*s) == std::vector<double>{1.0, 1.5, 3.0});
  }
  check_models(scenario_a(*server("fedau", {{"server_lr", 2.0}})), {{7.0 / 3, -1}, {3, 7.0 / 3}, {11.0 / 3, 7}});
  check_models(scenario_a(*server("fedau", {{"cutoff", std::int64_t{2}}})),
               {{5.0 / 3, -1}, {2, 2.0 / 3}, {4.0 / 3, 4}, {4.0 / 3, 4}});
  check_models(scenario_b(*server("fedau", {})), {{2.0 / 3, 0}, {10.0 / 9, 2.0 / 3}, {-1.0 / 9, 1}, {-1.0 / 9, 1}});
  check_models(scenario_b(*server("fedau", {{"cutoff", std::int64_t{2}}})),
               {{2.0 / 3, 0}, {10.0 / 9, 2.0 / 3}, {-26.0 / 27, 2.0 / 9}});
  check_round_trip([] { return server("fedau", {{"cutoff", std::int64_t{2}}}); });
}

TEST_CASE("FedAU's interval trace with K = 3 and K infinite", "[algorithms][participation][fedau]") {
  // One client, taking part in rounds 1 and 8 only.
  for (const auto& [cutoff, want] : std::vector<std::pair<std::int64_t, double>>{{3, 7.0 / 3}, {100000, 1.0}}) {
    ParamSet p;
    p.set("cutoff", cutoff);
    FederationShape shape;
    shape.num_clients = 1;
    auto s = find_algorithm("fedau")->make_server(p, shape);
    auto x = model_at(0, 0);
    ClientUpdate u;
    u.weights = x;
    s->aggregate(x, {u}, {1});
    for (std::uint32_t r = 2; r <= 7; ++r) s->aggregate_nothing(x, {r});
    s->aggregate(x, {u}, {8});
    CHECK(s->metrics().per_client.at("fedau_weight") == std::vector<double>{want});
  }
}

TEST_CASE("Known-probability FedAvg against the spec's vectors, refused without probabilities",
          "[algorithms][participation]") {
  FederationShape shape;
  shape.num_clients = 3;
  shape.participation_probability = [](std::uint32_t client, std::uint32_t) -> std::optional<double> {
    return std::vector<double>{0.5, 0.25, 0.2}.at(client);
  };
  const auto& info = *find_algorithm("known-probability");
  CHECK(info.check(ParamSet{}, shape).empty());
  check_models(scenario_a(*info.make_server(ParamSet{}, shape)),
               {{7.0 / 3, -1}, {3, 5}, {2.0 / 3, 38.0 / 3}, {2.0 / 3, 38.0 / 3}});
  check_models(scenario_b(*info.make_server(ParamSet{}, shape)),
               {{4.0 / 3, 0}, {4.0 / 3, 8.0 / 3}, {-4, -2}, {-4, -2}});
  auto s = info.make_server(ParamSet{}, shape);
  scenario_a(*s);
  shape.participation_probability = [](std::uint32_t client, std::uint32_t) -> std::optional<double> {
    if (client == 2) return std::nullopt;
    return 0.5;
  };
  CHECK_THAT(info.check(ParamSet{}, shape), Catch::Contains("client 2's availability model defines none"));
}

TEST_CASE("MIFA against the spec's vectors: the stale mean moves the model in an empty round",
          "[algorithms][participation][mifa]") {
  check_models(scenario_a(*server("mifa", {})), {{5.0 / 3, -1}, {2, 2.0 / 3}, {2, 8.0 / 3}, {2, 14.0 / 3}});
  check_models(scenario_a(*server("mifa", {{"server_lr", 2.0}})),
               {{7.0 / 3, -1}, {3, 7.0 / 3}, {3, 19.0 / 3}, {3, 31.0 / 3}});
  check_models(scenario_b(*server("mifa", {})),
               {{2.0 / 3, 0}, {10.0 / 9, 2.0 / 3}, {17.0 / 27, 4.0 / 9}, {4.0 / 27, 2.0 / 9}});
  SECTION("the official variant: changes over the local learning rate, stepped by the current one") {
    ParamSet p;
    p.set("variant", std::string("official"));
    FederationShape shape;
    shape.num_clients = 3;
    shape.local_lr = [](std::uint32_t round) { return 1.0 / round; };  // gamma_t = 1 / (t + 1)
    const auto& info = *find_algorithm("mifa");
    check_models(scenario_a(*info.make_server(p, shape)),
                 {{5.0 / 3, -1}, {2, 2.0 / 3}, {17.0 / 9, 23.0 / 9}, {65.0 / 36, 143.0 / 36}});
    p.set("server_lr", 2.0);
    CHECK_THAT(info.check(p, shape), Catch::Contains("no server learning rate"));
  }
  SECTION("official-wait: the model held where it started until every client took part once") {
    ParamSet p;
    p.set("variant", std::string("official-wait"));
    FederationShape shape;
    shape.num_clients = 3;
    shape.local_lr = [](std::uint32_t round) { return 1.0 / round; };
    const auto& info = *find_algorithm("mifa");
    auto held = info.make_server(p, shape);
    std::vector<ClientShares> shares;
    auto x = model_at(1, -1);
    // Client 3 arrives in round 3: table (2,2); (6,6); (-9,9), stepped by 1/3 then by 1/4.
    check_models(run_rounds(*held, x, table_change, 1, 4, &shares),
                 {{1, -1}, {1, -1}, {8.0 / 9, 8.0 / 9}, {29.0 / 36, 83.0 / 36}});
    CHECK(shares[0].empty());
    CHECK(shares[1].empty());
    CHECK(shares[2].size() == 3);
    CHECK(held->metrics().scalars.at("waiting") == 0);
    // Scenario B: while held, every client trains from the initial model (0, 0).
    check_models(scenario_b(*info.make_server(p, shape)), {{0, 0}, {0, 0}, {-2.0 / 9, 0}, {-7.0 / 18, 0}});
    auto waiting = info.make_server(p, shape);
    auto y = model_at(1, -1);
    run_rounds(*waiting, y, table_change, 1, 2);
    CHECK(waiting->metrics().scalars.at("waiting") == 1);
  }
  auto s = server("mifa", {});
  scenario_a(*s);
  CHECK(s->metrics().scalars.at("table_clients") == 3);
  check_round_trip([] { return server("mifa", {}); });
}

TEST_CASE("FedVARP against the spec's vectors, both empty-round rules", "[algorithms][participation][fedvarp]") {
  check_models(scenario_a(*server("fedvarp", {})), {{3, -1}, {19.0 / 6, 1.5}, {3, 11.0 / 3}, {3, 11.0 / 3}});
  check_models(scenario_a(*server("fedvarp", {{"empty_round", std::string("apply_ybar")}})),
               {{3, -1}, {19.0 / 6, 1.5}, {3, 11.0 / 3}, {3, 17.0 / 3}});
  check_models(scenario_a(*server("fedvarp", {{"server_lr", 2.0}})), {{5, -1}, {16.0 / 3, 4}, {5, 25.0 / 3}});
  check_models(scenario_b(*server("fedvarp", {})), {{2, 0}, {5.0 / 3, 1}, {1.0 / 3, 1.0 / 6}, {1.0 / 3, 1.0 / 6}});
  check_models(scenario_b(*server("fedvarp", {{"empty_round", std::string("apply_ybar")}})),
               {{2, 0}, {5.0 / 3, 1}, {1.0 / 3, 1.0 / 6}, {-5.0 / 9, -1.0 / 6}});
  check_round_trip([] { return server("fedvarp", {{"empty_round", std::string("apply_ybar")}}); });
}

TEST_CASE("Amplified FedAvg against the spec's vectors: the change since the snapshot is amplified every P rounds",
          "[algorithms][participation][amplified]") {
  const std::vector<std::pair<std::string, ParamValue>> p2 = {{"period", std::int64_t{2}}, {"factor", 2.0}};
  check_models(scenario_a(*server("amplified-fedavg", p2)), {{3, -1}, {6, 4}, {5.5, 6.5}, {5, 9}});
  check_models(scenario_b(*server("amplified-fedavg", p2)), {{2, 0}, {4, 2}, {1, 1}, {-2, 0}});
  // factor 1 is FedAvg over the participants.
  check_models(scenario_a(*server("amplified-fedavg", {{"period", std::int64_t{2}}, {"factor", 1.0}})),
               {{3, -1}, {3.5, 1.5}, {3, 4}, {3, 4}});
  check_round_trip([p2] { return server("amplified-fedavg", p2); });
}

TEST_CASE("A table above algorithm.memory_budget_mb goes to disk, or is refused with the size it needs",
          "[algorithms][participation]") {
  ParamSet p;
  p.set("memory_budget_mb", 100.0);
  FederationShape shape;
  shape.num_clients = 10000;
  shape.model_bytes = 1024 * 1024;  // 1 MB a model: 10000 MB for the table
  for (const std::string name : {"mifa", "fedvarp"}) {
    INFO(name);
    const auto& info = *find_algorithm(name);
    CHECK((!info.check || info.check(p, shape).empty()));  // a run keeps it on disk
    try {
      info.make_server(p, shape);  // no run directory to keep it in
      FAIL("a table above its budget with nowhere to go should be refused");
    } catch (const UserError& e) {
      CHECK_THAT(e.what(), Catch::Contains("10000 clients") && Catch::Contains("10000.0 MB") &&
                               Catch::Contains("algorithm.memory_budget_mb = 100;") &&
                               Catch::Contains("run directory"));
    }
  }
  // FedAWE's models are not a table of changes: refused before the run.
  CHECK_THAT(find_algorithm("fedawe")->check(p, shape), Catch::Contains("10000.0 MB"));
  shape.num_clients = 50;
  CHECK(find_algorithm("fedawe")->check(p, shape).empty());
}

TEST_CASE("A table on disk gives the spec's vectors and survives a checkpoint the run went on from",
          "[algorithms][participation][mifa]") {
  const auto dir = std::filesystem::temp_directory_path() / ("drift-disk-table-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const std::string name : {"mifa", "fedvarp"}) {
    INFO(name);
    auto make = [&] {
      ParamSet p;
      p.set("memory_budget_mb", 1e-9);  // below one entry of two float64 values
      FederationShape shape;
      shape.num_clients = 3;
      shape.model_bytes = 16;
      shape.state_dir = dir.string();
      return find_algorithm(name)->make_server(p, shape);
    };
    const auto in_memory = scenario_a(*server(name, {}));
    auto straight = make();
    check_models(scenario_a(*straight), in_memory, 0.0);
    CHECK(straight->metrics().scalars.at("table_on_disk") == 1.0);
    CHECK(std::filesystem::exists(dir / (name + "_table.bin")));
    // Checkpoint after round 2; the run goes on writing its table; a resume from the checkpoint
    // still sees the table as it was then.
    auto first = make();
    auto x = model_at(1, -1);
    run_rounds(*first, x, table_change, 1, 2);
    const auto at_checkpoint = pair_of(x);
    auto out = StateArchive::writer();
    first->archive(out);
    const auto checkpoint = out.take();
    run_rounds(*first, x, table_change, 3, 4);
    auto second = make();
    auto in = StateArchive::reader(checkpoint, "server");
    second->archive(in);
    in.expect_end();
    auto resumed = model_at(at_checkpoint[0], at_checkpoint[1]);
    check_models(run_rounds(*second, resumed, table_change, 3, 4), {in_memory[2], in_memory[3]}, 0.0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("FedAWE against the spec's vectors: clients start from their own model, changes echoed",
          "[algorithms][participation][fedawe]") {
  using V = ParamValue;
  const std::vector<std::pair<std::string, V>> paper = {{"clip_norm", V{0.0}}, {"evaluate", V{std::string("server")}}};
  auto with = [&](std::vector<std::pair<std::string, V>> more) {
    auto p = paper;
    p.insert(p.end(), more.begin(), more.end());
    return server("fedawe", p);
  };
  check_models(scenario_a(*with({})), {{3, -1}, {2.5, 3.5}, {-1.75, 6.75}, {-1.75, 6.75}});
  check_models(scenario_a(*with({{"evaluate", V{std::string("client_mean")}}})),
               {{5.0 / 3, -1}, {2, 2}, {-1.0 / 3, 17.0 / 3}, {-1.0 / 3, 17.0 / 3}});
  check_models(scenario_a(*with({{"server_lr", V{2.0}}})), {{5, -1}, {4, 8}, {-4.5, 14.5}, {-4.5, 14.5}});
  // The code's clip of the echoed mean to 0.5 (square roots: 1e-6).
  check_models(scenario_a(*with({{"clip_norm", V{0.5}}})), {{1.5, -1}, {1.305216, -0.503058}, {0.884170, -0.329698}},
               1e-6);
  check_models(scenario_a(*server("fedawe", {})),  // the code's defaults: clipped, the mean of the clients' models
               {{1.166667, -1}, {1.203477, -0.668705}, {1.024519, -0.387485}, {1.024519, -0.387485}}, 1e-6);
  // Scenario B: client 2 trains from its stored (0, 0) in round 2, not from the server's (2, 0).
  check_models(scenario_b(*with({})), {{2, 0}, {1.5, 2}, {-21.0 / 8, -1.5}, {-21.0 / 8, -1.5}});
  check_models(scenario_b(*with({{"evaluate", V{std::string("client_mean")}}})),
               {{2.0 / 3, 0}, {1, 4.0 / 3}, {-1.25, -1.0 / 3}, {-1.25, -1.0 / 3}});
  auto s = with({});
  scenario_a(*s);
  CHECK(s->metrics().per_client.at("echo_factor") == std::vector<double>{1, 3});
  CHECK(s->metrics().scalars.at("models_held") == 2);  // client 0 holds round 2's, clients 1 and 2 round 3's
  check_round_trip([&] { return with({}); });
}

TEST_CASE("Each server half's shares of scenario A: the coefficients its step gave each client",
          "[algorithms][participation][bias]") {
  const double third = 1.0 / 3;
  const std::map<std::string, std::vector<ClientShares>> want = {
      {"fedavg", {{{0, 1}}, {{0, 0.5}, {1, 0.5}}, {{1, 0.5}, {2, 0.5}}, {}}},  // sample weights, one sample each
      {"fedavg-participants", {{{0, 1}}, {{0, 0.5}, {1, 0.5}}, {{1, 0.5}, {2, 0.5}}, {}}},
      {"amplified-fedavg", {{{0, 1}}, {{0, 0.5}, {1, 0.5}}, {{1, 0.5}, {2, 0.5}}, {}}},
      {"fedavg-all", {{{0, third}}, {{0, third}, {1, third}}, {{1, third}, {2, third}}, {}}},
      // omega_i / N with the weights of the spec's section 6.4.
      {"fedau", {{{0, third}}, {{0, third}, {1, third}}, {{1, 2 * third}, {2, third}}, {}}},
      // Every remembered change 1/N, also in the empty round, whose step they make.
      {"mifa",
       {{{0, third}},
        {{0, third}, {1, third}},
        {{0, third}, {1, third}, {2, third}},
        {{0, third}, {1, third}, {2, third}}}},
      // A first change counts 1/|S| through the correction, a remembered one 1/N.
      {"fedvarp", {{{0, 1}}, {{0, third}, {1, 0.5}}, {{0, third}, {1, third}, {2, 0.5}}, {}}},
      // The echo: rounds since the client's last model, over |S|.
      {"fedawe", {{{0, 1}}, {{0, 0.5}, {1, 1}}, {{1, 0.5}, {2, 1.5}}, {}}},
  };
  for (const auto& [name, rounds] : want) {
    INFO(name);
    auto s = server(name, {});
    auto x = model_at(1, -1);
    std::vector<ClientShares> got;
    run_rounds(*s, x, table_change, 1, 4, &got);
    REQUIRE(got.size() == rounds.size());
    for (std::size_t r = 0; r < rounds.size(); ++r) {
      INFO("round " << r + 1);
      REQUIRE(got[r].size() == rounds[r].size());
      for (std::size_t k = 0; k < rounds[r].size(); ++k) {
        CHECK(got[r][k].first == rounds[r][k].first);
        CHECK(got[r][k].second == Approx(rounds[r][k].second).epsilon(1e-12));
      }
    }
  }
  // The oracle: 1 / (N p_i) with p = (1/2, 1/4, 1/5).
  FederationShape shape;
  shape.num_clients = 3;
  shape.participation_probability = [](std::uint32_t client, std::uint32_t) -> std::optional<double> {
    return std::vector<double>{0.5, 0.25, 0.2}.at(client);
  };
  auto oracle = find_algorithm("known-probability")->make_server(ParamSet{}, shape);
  auto x = model_at(1, -1);
  std::vector<ClientShares> got;
  run_rounds(*oracle, x, table_change, 1, 3, &got);
  REQUIRE(got.size() == 3);
  REQUIRE(got[2].size() == 2);
  CHECK(got[2][0].first == 1);
  CHECK(got[2][0].second == Approx(4.0 / 3).epsilon(1e-12));
  CHECK(got[2][1].first == 2);
  CHECK(got[2][1].second == Approx(5.0 / 3).epsilon(1e-12));
}
