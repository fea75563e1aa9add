#pragma once
#include <map>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/class_means.hpp"

namespace drift {

class FedProtoClient final : public ClientAlgorithm {
 public:
  explicit FedProtoClient(double lambda) : lambda_(lambda) {}
  void begin(ClientContext& ctx) override;
  torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) override;
  void end(ClientContext& ctx, ClientUpdate& update) override;

 private:
  double lambda_;
  std::map<std::uint32_t, torch::Tensor> global_;       // received prototypes, [1, d] per class
  torch::Tensor prototypes_, has_prototype_;            // [C, d], [C] built on the first batch
  ClassMeans means_;                                     // local feature means per class
};

class FedProtoServer final : public ServerAlgorithm {
 public:
  Payload broadcast(std::uint32_t round) override;
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates, std::uint32_t round) override;
  const std::map<std::uint32_t, torch::Tensor>& prototypes() const { return prototypes_; }

 private:
  std::map<std::uint32_t, torch::Tensor> prototypes_;
};

}  // namespace drift
