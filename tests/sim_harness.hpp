#pragma once
// A round driver without actors: a host that trains instantly (the update is the received
// weight plus client + 1) and answers selection requests with a CohortSampler in the same
// thread. Shared by the driver tests.
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "catch_torch.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/federation_data.hpp"
#include "engine/compose/loader.hpp"
#include "engine/sim/driver.hpp"
#include "engine/sim/edge_host.hpp"

namespace drift::test {

inline std::vector<std::vector<std::int64_t>> equal_histograms(std::uint32_t clients, std::int64_t samples) {
  std::vector<std::vector<std::int64_t>> h(clients, std::vector<std::int64_t>(2, 0));
  for (std::uint32_t c = 0; c < clients; ++c) h[c][c % 2] = samples;
  return h;
}

// 4 clients with 100 samples at 10 samples/s: a task takes about 10 virtual seconds; 2 rounds
// (or aggregations) of 2 clients.
inline const char* kFourClients = R"(
seed = 7
[federation]
clients = 4
rounds = 2
[sampler]
clients_per_round = 2
[profile]
speed = 10.0
[async]
concurrency = 2
buffer_size = 2
[output]
log_eligible = false
)";

// kFourClients in groups a (clients 0, 1) and b (2, 3): the edges of the hierarchy tests.
inline const std::string kTwoGroups = std::string(kFourClients) + R"(
[groups.a]
rule = "id_range"
from = 0
to = 1
[groups.b]
rule = "id_range"
from = 2
to = 3
)";

// One client task in the harness's world: 1000 bytes down at 1.25e7 B/s, 0.05 s each way, 10 s
// of compute, 500 bytes up at 1.25e6 B/s.
inline const double kTaskSeconds = 1000 / 1.25e7 + 0.05 + 10.0 + 0.05 + 500 / 1.25e6;

// Trains instantly: the update is the received weight plus (client + 1).
struct FakeHost : JobRunner, DriverListener {
  std::uint64_t task_size = 1000, upload_size = 500;
  std::vector<std::tuple<std::uint64_t, std::uint32_t, std::shared_ptr<const TrainingTask>>> launched;
  std::vector<RoundReport> reports;
  std::vector<double> evaluated;  // global weight at each evaluated aggregation
  std::set<std::uint32_t> failing;
  std::set<std::uint32_t> lost;  // their worker "dies" while they train
  bool finished = false;
  std::string reason;  // why the driver ended the run early; empty when it completed
  Driver* driver = nullptr;
  std::unique_ptr<CohortSampler> sampler;  // answers each selection request at once

  std::uint64_t task_bytes(const std::shared_ptr<const TrainingTask>&) override { return task_size; }
  void launch(std::uint64_t job, std::uint32_t c, const std::shared_ptr<const TrainingTask>& t) override {
    launched.emplace_back(job, c, t);
  }
  std::vector<std::uint32_t> counterfactual;  // clients of shadow jobs, in launch order
  void launch_counterfactual(std::uint64_t job, std::uint32_t c,
                             const std::shared_ptr<const TrainingTask>& t) override {
    counterfactual.push_back(c);
    launched.emplace_back(job, c, t);
  }
  void on_aggregation(RoundReport r, const NamedTensors* w) override {
    reports.push_back(std::move(r));
    if (w) evaluated.push_back((*w)[0].value.item<double>());
  }
  void on_progress(std::uint32_t round, std::uint32_t arrived, std::uint32_t needed) override {
    progress.push_back(std::to_string(round) + ":" + std::to_string(arrived) + "/" + std::to_string(needed));
  }
  std::vector<std::string> progress;  // "round:arrived/needed"
  void on_finished(const RunEnd& end) override {
    finished = true;
    reason = end.reason;
    status = end.status;
  }
  RunStatus status = RunStatus::completed;
  std::uint32_t checkpoint_at = 0;  // hold the driver for a checkpoint after this aggregation
  bool held = false;                // it holds, every job answered
  bool wants_checkpoint(std::uint32_t round, bool) override { return round == checkpoint_at; }
  void on_checkpoint_ready(std::uint32_t) override { held = true; }
  bool stop = false;  // a person asked the run to stop (SIGINT)
  bool stop_asked() const override { return stop; }
  std::vector<std::string> requests;  // every selection request and its answer, as text
  void request_selection(const SelectionRequest& r) override {
    auto answer = sampler->answer(r);
    std::string line =
        std::to_string(r.round) + " t=" + std::to_string(r.time) + " slots=" + std::to_string(r.slots) + " busy";
    for (auto c : r.busy) line += " " + std::to_string(c);
    line += " -> ";
    for (auto c : answer.clients) line += " " + std::to_string(c);
    requests.push_back(line);
    driver->on_selection(std::move(answer));
  }

  // Answers an edge host keeps back (DeferredEdgeHost), given once the jobs launched before them answered.
  std::vector<std::function<void()>> later;

  // Completes every launched job, newest first if `reverse`, then the answers kept back, until
  // nothing is pending.
  void pump(bool reverse = false) {
    while (!launched.empty() || !later.empty()) {
      if (launched.empty()) {
        auto answers = std::move(later);
        later.clear();
        for (auto& answer : answers) answer();
        continue;
      }
      auto batch = std::move(launched);
      launched.clear();
      if (reverse) std::reverse(batch.begin(), batch.end());
      for (auto& [job, c, task] : batch) {
        JobOutcome o;
        o.ok = !failing.count(c) && !lost.count(c);
        o.lost = lost.count(c) > 0;
        o.error = o.ok ? "" : o.lost ? "worker 'w1' lost" : "boom";
        o.upload_bytes = upload_size;
        o.update.client_id = c;
        o.update.model_version = task->model_version;
        o.update.num_samples = 100;
        o.update.metrics.loss = 1.0 + c;
        o.update.weights = {{"w", task->weights[0].value + static_cast<double>(c + 1)}};
        driver->on_outcome(job, std::move(o));
      }
    }
  }
};

// An edge host whose edges apply every call, in order, only after the jobs launched before it
// answered, as edges in another process would, answering what they are asked then: the driver
// must give the same run. (start_model and the archive read the edges at once, as the driver
// calls them only when nothing is left to apply.)
class DeferredEdgeHost final : public EdgeHost {
 public:
  DeferredEdgeHost(std::unique_ptr<EdgeHost> inner, std::vector<std::function<void()>>& later)
      : inner_(std::move(inner)), later_(later) {}
  std::uint32_t deferred = 0;  // calls kept back so far

  void pull(std::uint32_t e, const NamedTensors& global) override {
    keep([this, e, sent = clone(global)] { inner_->pull(e, sent); });  // (a message copies the model)
  }
  void regroup(std::uint32_t e, const ClientRegroup& r) override {
    keep([this, e, r] { inner_->regroup(e, r); });
  }
  void task(std::uint32_t e, std::uint32_t serial, std::uint64_t version, TaskReady ready) override {
    keep([this, e, serial, version, ready] { inner_->task(e, serial, version, ready); });
  }
  const NamedTensors* start_model(std::uint32_t e, std::uint32_t c) const override { return inner_->start_model(e, c); }
  void aggregate(std::uint32_t e, std::vector<ClientUpdate> updates, AggregationInput input, Aggregated done) override {
    keep([this, e, updates, input, done] { inner_->aggregate(e, updates, input, done); });
  }
  void models(const std::vector<std::uint32_t>& edges, ModelsReady ready) override {
    keep([this, edges, ready] { inner_->models(edges, ready); });
  }
  void drop_model(std::uint32_t e) override {
    keep([this, e] { inner_->drop_model(e); });
  }
  void settle(std::function<void()> ready) override { keep(ready); }
  void archive_server(std::uint32_t e, StateArchive& ar) override { inner_->archive_server(e, ar); }
  void archive_model(std::uint32_t e, StateArchive& ar) override { inner_->archive_model(e, ar); }

 private:
  void keep(std::function<void()> call) {
    ++deferred;
    later_.push_back(std::move(call));
  }
  std::unique_ptr<EdgeHost> inner_;
  std::vector<std::function<void()>>& later_;
};

struct Sim {
  Scenario scenario;
  FakeHost host;
  std::unique_ptr<Driver> driver;
  DeferredEdgeHost* deferred = nullptr;  // the edge host, when its answers are kept back

  // Whose server halves aggregate: FedAvg's whatever the scenario says (the driver tests' fixed
  // arithmetic), or the scenario's algorithm, at the edges with their own shapes.
  enum class Server { fedavg, scenario };

  // `state_dir`: where the scenario's server halves may keep files (a run directory's role).
  // `defer_edges`: the edges' answers come late (DeferredEdgeHost).
  explicit Sim(const std::string& text, const std::vector<Override>& overrides = {}, std::uint32_t clients = 0,
               Server server = Server::fedavg, const std::string& state_dir = {}, bool defer_edges = false)
      : scenario(parse_scenario(text, "sim.toml", overrides)) {
    DriverSetup setup;
    setup.scenario = &scenario;
    setup.population = std::make_shared<const Population>(
        build_population(scenario, equal_histograms(clients ? clients : scenario.clients, 100)));
    host.sampler = std::make_unique<CohortSampler>(scenario, setup.population);
    setup.initial_weights = {{"w", torch::zeros({1}, torch::kFloat64)}};
    setup.algorithm = find_algorithm("fedavg")->make_server(ParamSet{}, FederationShape{});
    setup.make_edge_algorithm = [](std::uint32_t) {
      return find_algorithm("fedavg")->make_server(ParamSet{}, FederationShape{});
    };
    if (server == Server::scenario) {
      const AlgorithmInfo* info = find_algorithm(scenario.algorithm);
      FederationShape shape;
      shape.num_clients = setup.population->size();
      shape.model_bytes = 8;  // the one float64 weight
      shape.state_dir = state_dir;
      if (moves_clients(scenario.timeline)) shape.most_clients = shape.num_clients;  // as federation_shape
      setup.algorithm = info->make_server(scenario.algorithm_params, shape);
      setup.make_edge_algorithm = [this, info, shape, population = setup.population](std::uint32_t e) {
        return info->make_server(scenario.algorithm_params, edge_shape(shape, scenario, *population, e));
      };
    }
    setup.log_eligible = scenario.log_eligible;
    if (defer_edges && scenario.hierarchy.enabled()) {
      auto inner = make_local_edge_host(scenario, setup.population->edges(), setup.make_edge_algorithm);
      auto host_of_edges = std::make_unique<DeferredEdgeHost>(std::move(inner), host.later);
      deferred = host_of_edges.get();
      setup.edge_host = std::move(host_of_edges);
    }
    driver = make_driver(std::move(setup), host, host);
    host.driver = driver.get();
  }
  void run(bool reverse = false) {
    driver->start();
    host.pump(reverse);
  }
  const ClientRecord& event(std::size_t round, std::uint32_t client, const std::string& kind) const {
    for (const auto& c : host.reports.at(round).clients)
      if (c.client_id == client && name_of(c.event) == kind) return c;
    FAIL("no " << kind << " event for client " << client << " in report " << round);
    throw std::logic_error("unreachable");
  }
};

}  // namespace drift::test
