#pragma once
#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/class_means.hpp"

namespace drift {

class FedNHClient final : public ClientAlgorithm {
 public:
  void begin(ClientContext& ctx) override;
  void end(ClientContext& ctx, ClientUpdate& update) override;
};

class FedNHServer final : public ServerAlgorithm {
 public:
  FedNHServer(double rho, double server_lr) : rho_(rho), server_lr_(server_lr) {}
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override;
  void archive(StateArchive&) override {}  // the prototypes live in the global model

 private:
  double rho_, server_lr_;
};

}  // namespace drift
