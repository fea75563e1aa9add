// Edge server halves following clients between edges (ServerAlgorithm::regroup,
// docs/hierarchy.md#moving-clients): what is kept per client goes with those who stay to their
// new places, is forgotten for those who leave, and starts afresh for those who join; divisors
// by N take the edge's new count. Hand-computed on a one-weight model.
#include "catch_torch.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/client_change_table.hpp"
#include "engine/core/error.hpp"

#include <unistd.h>  // getpid

#include <filesystem>

namespace drift {
namespace {

NamedTensors weight(double w) { return {{"w", torch::full({1}, w, torch::kFloat64)}}; }

double value_of(const NamedTensors& x) { return x[0].value.item<double>(); }

// Each (local id, change) as an update from the model `x`.
std::vector<ClientUpdate> updates_of(const NamedTensors& x,
                                     const std::vector<std::pair<std::uint32_t, double>>& changes) {
  std::vector<ClientUpdate> out;
  for (const auto& [client, change] : changes) {
    ClientUpdate u;
    u.client_id = client;
    u.num_samples = 100;
    u.weights = weight(value_of(x) + change);
    out.push_back(std::move(u));
  }
  return out;
}

std::unique_ptr<ServerAlgorithm> edge_server(const std::string& name, std::vector<std::uint32_t> ids) {
  FederationShape shape;
  shape.num_clients = static_cast<std::uint32_t>(ids.size());
  shape.client_ids = std::move(ids);
  shape.model_bytes = 8;
  shape.participation_probability = [](std::uint32_t client, std::uint32_t) {
    return std::optional<double>(0.1 * (client + 1));
  };
  return find_algorithm(name)->make_server(ParamSet{}, shape);
}

ClientRegroup regroup_of(std::vector<std::uint32_t> clients, std::vector<std::optional<std::uint32_t>> previous) {
  return ClientRegroup{std::move(clients), std::move(previous)};
}

double entry_of(const ClientChangeTable& t, std::uint32_t c) { return t.entry(c, 1).item<double>(); }

}  // namespace

TEST_CASE("a change table keeps the rows of clients who stay, forgets those who left, sums again") {
  ClientChangeTable t(3);
  t.store(0, torch::full({1}, 1.0, torch::kFloat64), torch::kFloat32);
  t.store(2, torch::full({1}, 3.5, torch::kFloat64), torch::kFloat32);
  // Client 2 stays (now at place 0), client 0 leaves, a newcomer takes place 1.
  t.regroup({2, std::nullopt});
  CHECK(t.clients() == 2);
  CHECK(t.filled() == 1);
  CHECK(entry_of(t, 0) == 3.5);
  CHECK_FALSE(t.has_entry(1));
  CHECK(t.sum(1).item<double>() == 3.5);
  CHECK(t.bytes() == 4);
  // Only newcomers: the sum stays as it was.
  t.regroup({std::nullopt, 0, 1, std::nullopt});
  CHECK(t.filled() == 1);
  CHECK(entry_of(t, 1) == 3.5);
  CHECK(t.sum(1).item<double>() == 3.5);
  // Everyone leaves: an empty table sums to zero.
  t.regroup({});
  CHECK(t.filled() == 0);
  CHECK(t.sum(1).item<double>() == 0.0);
}

namespace {

void store(ClientChangeTable& t, std::uint32_t client, double value) {
  t.store(client, torch::full({1}, value, torch::kFloat64), torch::kFloat32);
}

// Every entry, the sum, the filled count and the bytes of two tables alike.
void check_alike(const ClientChangeTable& disk, const ClientChangeTable& memory) {
  REQUIRE(disk.clients() == memory.clients());
  for (std::uint32_t c = 0; c < memory.clients(); ++c) {
    INFO("client " << c);
    CHECK(disk.has_entry(c) == memory.has_entry(c));
    CHECK(entry_of(disk, c) == entry_of(memory, c));
  }
  CHECK(disk.sum(1).item<double>() == memory.sum(1).item<double>());
  CHECK(disk.filled() == memory.filled());
  CHECK(disk.bytes() == memory.bytes());
}

}  // namespace

TEST_CASE("a change table on disk follows moves as one in memory, and a checkpoint keeps its rows") {
  const auto dir = std::filesystem::temp_directory_path() / ("drift-moving-table-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ClientChangeTable memory(3), disk(3, dir / "table.bin", 5);
  REQUIRE(disk.on_disk());
  for (auto* t : {&memory, &disk}) {
    store(*t, 0, 1.0);
    store(*t, 2, 3.5);
    t->regroup({2, std::nullopt});  // client 2 stays at place 0; client 0 left; a newcomer
    store(*t, 1, 2.0);              // the newcomer writes into the row client 0 left
  }
  check_alike(disk, memory);
  CHECK(memory.sum(1).item<double>() == 5.5);
  // A checkpoint now; then more moves and writes, some into the rows it recorded.
  auto saved = StateArchive::writer();
  disk.archive(saved);
  for (auto* t : {&memory, &disk}) {
    t->regroup({std::nullopt, 1, 0, std::nullopt, std::nullopt});  // two stay (swapped), three join
    store(*t, 0, 7.0);
    store(*t, 4, -1.0);
    store(*t, 1, 0.5);
  }
  check_alike(disk, memory);
  CHECK(memory.sum(1).item<double>() == 10.0);  // 7 + 0.5 + 3.5 - 1
  CHECK_THROWS_AS(disk.regroup({std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt}),
                  std::logic_error);  // more clients than rows
  // A resume: a table of the edge as it was at the checkpoint reads the entries then recorded.
  ClientChangeTable restored(3, dir / "table.bin", 5);
  restored.regroup({std::nullopt, std::nullopt});
  auto in = StateArchive::reader(saved.take(), "checkpoint");
  restored.archive(in);
  ClientChangeTable then(2);
  store(then, 0, 3.5);
  store(then, 1, 2.0);
  check_alike(restored, then);
  std::filesystem::remove_all(dir);
}

TEST_CASE("with clients moving, the budget is checked against the population, and a table above it goes to disk") {
  FederationShape shape;
  shape.num_clients = 10;
  shape.model_bytes = 1024 * 1024;
  CHECK_FALSE(make_change_table("mifa", "the latest change", shape, 50.0).on_disk());  // clients do not move
  CHECK(change_table_placement("mifa", "the latest change", shape, 50.0) ==
        "mifa keeps the latest change of each of 10 clients: 10.0 MB, in memory (within algorithm.memory_budget_mb = "
        "50)");
  shape.most_clients = 100;
  CHECK(change_table_placement("mifa", "the latest change", shape, 50.0) ==
        "mifa keeps the latest change of each of up to 100 clients: 100.0 MB, on disk in the run directory (above "
        "algorithm.memory_budget_mb = 50)");
  CHECK_THROWS_WITH(make_change_table("mifa", "the latest change", shape, 50.0),
                    Catch::Contains("100 x 1.0 MB = 100.0 MB") && Catch::Contains("run directory"));
  CHECK_FALSE(make_change_table("mifa", "the latest change", shape, 100.0).on_disk());
  const auto dir = std::filesystem::temp_directory_path() / ("drift-moving-budget-" + std::to_string(::getpid()));
  shape.state_dir = dir.string();
  auto table = make_change_table("mifa", "the latest change", shape, 50.0);
  CHECK(table.on_disk());
  CHECK(table.clients() == 10);
  table.regroup(std::vector<std::optional<std::uint32_t>>(100));  // room for the whole population
  CHECK(table.clients() == 100);
  std::filesystem::remove_all(dir);
}

TEST_CASE("FedAU at an edge: a client who stays keeps its count, a newcomer starts with none recorded") {
  // Edge of clients {0, 2}. Round 1: local 0 changes +1, weight 1: x = 1/2. Round 2 nobody:
  // local 0 counts 1, local 1 (client 2) counts 2. Then client 0 leaves and client 5 joins:
  // {2, 5}, client 2 at place 0 with its count of 2. Round 3: client 2 changes +4 with weight 1
  // (nothing recorded yet): x = 1/2 + 4/2 = 5/2, and records the interval 2 + 1 = 3. Round 4:
  // weight 3: x = 5/2 + 3 x 4 / 2 = 17/2. Without the count carried over it would record 1.
  auto server = edge_server("fedau", {0, 2});
  auto x = weight(0.0);
  server->aggregate(x, updates_of(x, {{0, 1.0}}), AggregationInput{1});
  CHECK(value_of(x) == 0.5);
  server->aggregate_nothing(x, AggregationInput{2});
  server->regroup(regroup_of({2, 5}, {1, std::nullopt}));
  server->aggregate(x, updates_of(x, {{0, 4.0}}), AggregationInput{3});
  CHECK(value_of(x) == 2.5);
  server->aggregate(x, updates_of(x, {{0, 4.0}}), AggregationInput{4});
  CHECK(server->metrics().per_client.at("fedau_weight") == std::vector<double>{3.0});
  CHECK(value_of(x) == 8.5);
  // Everyone leaves: an empty round books nobody.
  server->regroup(regroup_of({}, {}));
  CHECK_FALSE(server->aggregate_nothing(x, AggregationInput{5}));
}

TEST_CASE("MIFA and FedVARP at an edge step along the rows of the clients they hold now") {
  // MIFA, clients {0, 1}: both change (+1, +3): x = 2. Client 1 leaves, client 4 joins ({0, 4}):
  // the table holds client 0's +1 over N = 2; an empty round steps x = 2 + 1/2.
  auto mifa = edge_server("mifa", {0, 1});
  auto x = weight(0.0);
  mifa->aggregate(x, updates_of(x, {{0, 1.0}, {1, 3.0}}), AggregationInput{1});
  CHECK(value_of(x) == 2.0);
  mifa->regroup(regroup_of({0, 4}, {0, std::nullopt}));
  CHECK(mifa->aggregate_nothing(x, AggregationInput{2}));
  CHECK(value_of(x) == 2.5);
  CHECK(mifa->shares({}) == ClientShares{{0, 0.5}});
  // FedVARP, clients {0, 1}: round 1 as MIFA's (ybar 0, corrections +1 and +3: v = 2). Client 0
  // leaves ({1}, N = 1): ybar = 3; round 2, client 1 changes +5: v = 3 + (5 - 3) = 5, x = 7.
  auto varp = edge_server("fedvarp", {0, 1});
  auto y = weight(0.0);
  varp->aggregate(y, updates_of(y, {{0, 1.0}, {1, 3.0}}), AggregationInput{1});
  CHECK(value_of(y) == 2.0);
  varp->regroup(regroup_of({1}, {1}));
  varp->aggregate(y, updates_of(y, {{0, 5.0}}), AggregationInput{2});
  CHECK(value_of(y) == 7.0);
}

TEST_CASE("the oracle and fedavg-all at an edge divide by its clients now, with their own probabilities") {
  // known-probability, clients {0, 2} (p = 0.1 (id + 1)): local 1 is client 2, p = 0.3:
  // x = 1/2 x 0.6 / 0.3 = 1. After {2, 7, 9} (client 2 at place 0, N = 3): local 1 is client 7,
  // p = 0.8: x = 1 + 1/3 x 2.4 / 0.8 = 2.
  auto oracle = edge_server("known-probability", {0, 2});
  auto x = weight(0.0);
  oracle->aggregate(x, updates_of(x, {{1, 0.6}}), AggregationInput{1});
  CHECK(value_of(x) == Approx(1.0).epsilon(1e-15));
  oracle->regroup(regroup_of({2, 7, 9}, {1, std::nullopt, std::nullopt}));
  oracle->aggregate(x, updates_of(x, {{1, 2.4}}), AggregationInput{2});
  const auto probabilities = oracle->metrics().per_client.at("participation_probability");
  REQUIRE(probabilities.size() == 1);
  CHECK(probabilities[0] == Approx(0.8).epsilon(1e-15));
  CHECK(value_of(x) == Approx(2.0).epsilon(1e-15));
  // fedavg-all: 1/N of the change, N = 2 then 4.
  auto all = edge_server("fedavg-all", {0, 1});
  auto y = weight(0.0);
  all->aggregate(y, updates_of(y, {{0, 4.0}}), AggregationInput{1});
  CHECK(value_of(y) == 2.0);
  all->regroup(regroup_of({0, 1, 2, 3}, {0, 1, std::nullopt, std::nullopt}));
  all->aggregate(y, updates_of(y, {{0, 4.0}}), AggregationInput{2});
  CHECK(value_of(y) == 3.0);
}

}  // namespace drift
