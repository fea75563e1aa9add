#pragma once
#include <map>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/class_means.hpp"

namespace drift {

// What the client pulls toward the global per-class mean: its features (FedProto) or its
// logits (FedDistill, which is the same scheme one layer later).
enum class ClassMeanTarget { features, logits };

class FedProtoClient final : public ClientAlgorithm {
 public:
  explicit FedProtoClient(double lambda, ClassMeanTarget target = ClassMeanTarget::features)
      : lambda_(lambda), target_(target) {}
  void begin(ClientContext& ctx) override;
  torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) override;
  void end(ClientContext& ctx, ClientUpdate& update) override;

 private:
  const char* key() const;
  double lambda_;
  ClassMeanTarget target_;
  std::map<std::uint32_t, torch::Tensor> global_;  // received prototypes, [1, d] per class
  torch::Tensor prototypes_, has_prototype_;       // [C, d], [C] built on the first batch
  ClassMeans means_;                               // local feature means per class
};

class FedProtoServer final : public ServerAlgorithm {
 public:
  // `average_weights`: FedAvg beside the prototypes (the homogeneous form FedSKC and FedCCL
  // compare against); false for private models.
  explicit FedProtoServer(bool average_weights = true, ClassMeanTarget target = ClassMeanTarget::features)
      : average_weights_(average_weights), target_(target) {}
  Payload broadcast(std::uint32_t round) override;
  void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                 const AggregationInput& input) override;
  const std::map<std::uint32_t, torch::Tensor>& prototypes() const { return prototypes_; }
  void archive(StateArchive& ar) override;

 private:
  bool average_weights_;
  ClassMeanTarget target_;
  std::map<std::uint32_t, torch::Tensor> prototypes_;
};

}  // namespace drift
