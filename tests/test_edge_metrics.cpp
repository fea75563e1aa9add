// What the edges' server halves report, in a hierarchy's metrics (engine/sim/edge_metrics.hpp):
// each scalar per edge from the edges whose models the step took, each per-client value in the
// order of the step's aggregated clients.
#include <cmath>

#include "catch_torch.hpp"
#include "engine/sim/edge_metrics.hpp"
#include "sim_harness.hpp"

namespace drift {
namespace {

AlgorithmMetrics metrics_of(double table, std::vector<double> weights) {
  AlgorithmMetrics m;
  m.scalars["table_clients"] = table;
  m.per_client["weight"] = std::move(weights);
  return m;
}

bool nan(double x) { return std::isnan(x); }

}  // namespace

TEST_CASE("edge metrics keep each edge's last scalars and each client's latest value") {
  EdgeMetrics first, third;
  first.record(metrics_of(2, {0.5, 1.5}), {0, 4});
  first.record(metrics_of(3, {2.5}), {4});
  AlgorithmMetrics odd = metrics_of(1, {7.0});
  odd.per_client["misaligned"] = {1.0, 2.0};  // two values for one client: left out
  third.record(odd, {2});
  RoundReport report;
  report_edge_metrics(report, 3, {{0, &first}, {2, &third}}, {0, 2, 4});
  REQUIRE(report.edge_algorithm.count("table_clients") == 1);
  const auto& table = report.edge_algorithm.at("table_clients");
  REQUIRE(table.size() == 3);
  CHECK(table[0] == 3.0);
  CHECK(nan(table[1]));
  CHECK(table[2] == 1.0);
  CHECK(report.algorithm.scalars.empty());
  CHECK(report.algorithm.per_client.at("weight") == std::vector<double>{0.5, 7.0, 2.5});
  CHECK(report.algorithm.per_client.count("misaligned") == 0);
  // A client the step did not aggregate is not listed; one aggregated without a value is NaN.
  RoundReport partial;
  report_edge_metrics(partial, 3, {{0, &first}}, {0, 1});
  CHECK(partial.algorithm.per_client.at("weight")[0] == 0.5);
  CHECK(nan(partial.algorithm.per_client.at("weight")[1]));
}

TEST_CASE("a hierarchy's metrics give each reporting edge's table, sync and buffered") {
  // Edges by label: {0, 2} and {1, 3}, every client sampled; client 2 never answers. MIFA's
  // table at edge 0 holds client 0 only, at edge 1 both clients.
  const std::string world = std::string(test::kFourClients) + R"(
[algorithm]
name = "mifa"
[hierarchy]
edges = 2
edge_rounds = 2
assign = "label"
)";
  const std::vector<Override> all{{"sampler.clients_per_round", "4"}, {"federation.rounds", "2"}};
  test::Sim sync(world, all, 0, test::Sim::Server::scenario);
  sync.host.failing = {2};
  sync.run();
  REQUIRE(sync.host.reports.size() == 2);
  for (const auto& r : sync.host.reports) {
    CHECK(r.edge_algorithm.at("table_clients") == std::vector<double>{1.0, 2.0});
    CHECK(r.algorithm.scalars.empty());
  }
  auto buffered = all;
  buffered.insert(buffered.end(), {{"hierarchy.cloud", "\"fedbuff\""}, {"hierarchy.buffer", "1"}});
  test::Sim fedbuff(world, buffered, 0, test::Sim::Server::scenario);
  fedbuff.host.failing = {2};
  fedbuff.run();
  REQUIRE(fedbuff.host.reports.size() == 2);
  for (const auto& r : fedbuff.host.reports) {
    REQUIRE(r.edges_reported.size() == 1);
    const auto& table = r.edge_algorithm.at("table_clients");
    const auto e = r.edges_reported[0];
    CHECK(table[e] == (e == 0 ? 1.0 : 2.0));
    CHECK(nan(table[1 - e]));
  }
}

}  // namespace drift
