#include "engine/sim/edge_host.hpp"

#include "engine/config/scenario.hpp"
#include "engine/sim/round_rules.hpp"
#include "engine/sim/server_aggregation.hpp"
#include "engine/tensors/named_tensors.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {

namespace {

class LocalEdgeHost final : public EdgeHost {
 public:
  LocalEdgeHost(const Scenario& scenario, std::uint32_t edges,
                const std::function<std::unique_ptr<ServerAlgorithm>(std::uint32_t)>& make)
      : scenario_(scenario), models_(edges) {
    for (std::uint32_t e = 0; e < edges; ++e) servers_.push_back(make(e));
  }

  void pull(std::uint32_t edge, const NamedTensors& global) override { models_.at(edge) = clone(global); }
  void regroup(std::uint32_t edge, const ClientRegroup& regroup) override { servers_.at(edge)->regroup(regroup); }
  void task(std::uint32_t edge, std::uint32_t serial, std::uint64_t version, TaskReady ready) override {
    ready(make_task(scenario_, serial, version, models_.at(edge), servers_.at(edge)->broadcast(serial)));
  }
  const NamedTensors* start_model(std::uint32_t edge, std::uint32_t client) const override {
    return servers_.at(edge)->start_model(client);
  }
  void aggregate(std::uint32_t edge, std::vector<ClientUpdate> updates, AggregationInput input,
                 Aggregated done) override {
    done(aggregate_at(*servers_.at(edge), models_.at(edge), updates, input));
  }
  void models(const std::vector<std::uint32_t>& edges, ModelsReady ready) override {
    std::vector<NamedTensors> out;
    for (auto e : edges) out.push_back(std::exchange(models_.at(e), {}));
    ready(std::move(out));
  }
  void drop_model(std::uint32_t edge) override { models_.at(edge).clear(); }
  void settle(std::function<void()> ready) override { ready(); }
  void archive_server(std::uint32_t edge, StateArchive& ar) override { servers_.at(edge)->archive(ar); }
  void archive_model(std::uint32_t edge, StateArchive& ar) override { archive_named(ar, models_.at(edge)); }

 private:
  const Scenario& scenario_;
  std::vector<std::unique_ptr<ServerAlgorithm>> servers_;
  std::vector<NamedTensors> models_;
};

}  // namespace

std::unique_ptr<EdgeHost> make_local_edge_host(
    const Scenario& scenario, std::uint32_t edges,
    const std::function<std::unique_ptr<ServerAlgorithm>(std::uint32_t)>& make) {
  return std::make_unique<LocalEdgeHost>(scenario, edges, make);
}

}  // namespace drift
