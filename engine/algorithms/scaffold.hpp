#pragma once
#include <map>

#include "engine/algorithms/algorithm.hpp"

namespace drift {

class ScaffoldClient final : public ClientAlgorithm {
 public:
  void begin(ClientContext& ctx) override;
  torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) override;
  void after_step(ClientContext& ctx) override;
  void end(ClientContext& ctx, ClientUpdate& update) override;

 private:
  struct Param {
    std::string name;
    torch::Tensor value;       // the live parameter
    torch::Tensor c, c_i;      // server and client control variates
    torch::Tensor correction;  // c - c_i
  };
  std::vector<Param> params_;
  // The correction moves the parameters after the optimiser's step (momentum or clipping on);
  // false: it is added to the gradient, which is the same step when neither is on.
  bool after_optimiser_ = false;
  double learning_rate_ = 0.0;
};

class ScaffoldServer final : public ServerAlgorithm {
 public:
  ScaffoldServer(double eta, std::uint32_t num_clients) : eta_(eta), num_clients_(num_clients) {}
  Payload broadcast(std::uint32_t round) override;
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override;
  const std::map<std::string, torch::Tensor>& control() const { return c_; }
  void archive(StateArchive& ar) override;

 private:
  double eta_;
  std::uint32_t num_clients_;
  std::map<std::string, torch::Tensor> c_;  // float64, by parameter name
};

}  // namespace drift
