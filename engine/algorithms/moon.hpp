#pragma once
#include <memory>

#include "engine/algorithms/algorithm.hpp"

namespace drift {

// MOON's model-contrastive term per sample: -log( e^{cos(z,g)/tau} / (e^{cos(z,g)/tau} +
// e^{cos(z,p)/tau}) ) for the local, global-model and previous-model representations. [B]
torch::Tensor moon_contrastive(const torch::Tensor& z, const torch::Tensor& z_global, const torch::Tensor& z_previous,
                               double tau);

class MoonClient final : public ClientAlgorithm {
 public:
  MoonClient(double mu, double tau) : mu_(mu), tau_(tau) {}
  void begin(ClientContext& ctx) override;
  torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx) override;
  void end(ClientContext& ctx, ClientUpdate& update) override;

 private:
  double mu_, tau_;
  // Frozen copies, built once per trainer slot from the model's recipe and reloaded per job.
  std::shared_ptr<Model> global_, previous_;
  NamedTensors initial_;  // the round-1 model: "previous" of a client never trained before
  bool contrast_ = false;
};

}  // namespace drift
