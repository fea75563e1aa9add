#pragma once
#include "engine/algorithms/algorithm.hpp"

namespace drift {

struct FedRCLOptions {
  double tau = 0.05;
  double threshold = 0.7;      // a same-class pair this similar is pushed apart (relaxation)
  std::int64_t negatives = 2;  // hardest other-class samples per anchor
  double scl_weight = 1.0, penalty_weight = 1.0;
};

// FedRCL's contrastive terms on one level of features [B, d] with labels [B]: the mean over
// anchors that have a same-class partner of the supervised term, plus the weighted mean over
// all anchors of the relaxation penalty (see fedrcl.cpp).
torch::Tensor fedrcl_level_loss(const torch::Tensor& features, const torch::Tensor& labels, const FedRCLOptions& o);

class FedRCLClient final : public ClientAlgorithm {
 public:
  explicit FedRCLClient(FedRCLOptions o) : o_(o) {}
  torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) override;

 private:
  FedRCLOptions o_;
};

}  // namespace drift
