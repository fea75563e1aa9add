// FedAvg (McMahan et al. 2017): local SGD on cross-entropy; the server replaces the global
// model by the sample-weighted mean of the participants' models (docs/algorithms.md#fedavg).
#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/builtin.hpp"

namespace drift {
namespace {

class LocalSgd final : public ClientAlgorithm {};

class FedAvgServer final : public ServerAlgorithm {
 public:
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, const AggregationInput&) override {
    global = weighted_average(global, updates, sample_weights(updates));
  }
  // The schedule's model is FedAsync's and FedBuff's own server update: taken as it is.
  void aggregate_async(NamedTensors& global, NamedTensors mean, std::vector<ClientUpdate>,
                       const AggregationInput&) override {
    global = std::move(mean);
  }
  void archive(StateArchive&) override {}  // keeps nothing between aggregations
};

}  // namespace

std::unique_ptr<ServerAlgorithm> make_fedavg_server() { return std::make_unique<FedAvgServer>(); }
std::unique_ptr<ClientAlgorithm> make_local_sgd_client() { return std::make_unique<LocalSgd>(); }

AlgorithmInfo fedavg_info() {
  AlgorithmInfo info{"fedavg",
                     "FedAvg: local SGD, server takes the sample-weighted mean of the client models",
                     {},
                     [](const ParamSet&) { return make_local_sgd_client(); },
                     [](const ParamSet&, const FederationShape&) { return make_fedavg_server(); }};
  info.packed = plain_local_sgd;
  info.privatisable = true;
  info.edge_tier = true;
  info.edge_moves = true;
  return info;
}

}  // namespace drift
