// FedGH (Yi et al. 2023), as HtFLlib runs it: private feature extractors and a global
// classifier head the server trains on the clients' class prototypes.
//  - Client: starts from the global head when there is one, trains with CE, then uploads the
//    mean feature of each local class (eval mode, every local sample).
//  - Server: trains the head, Linear(d, C), with CE on the round's (prototype, class) pairs,
//    SGD for server_epochs full-batch steps; the head persists across rounds and is
//    initialised from the scenario seed.
#include "engine/algorithms/aggregation.hpp"
#include "engine/algorithms/builtin.hpp"
#include "engine/algorithms/class_means.hpp"
#include "engine/algorithms/head_exchange.hpp"
#include "engine/algorithms/param_table.hpp"
#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {
namespace {

constexpr const char* kPrototypes = "prototypes";

class FedGhClient final : public ClientAlgorithm {
 public:
  void begin(ClientContext& ctx) override { load_head(ctx.model, ctx.task.payload); }
  void end(ClientContext& ctx, ClientUpdate& update) override {
    ClassMeans means;
    for_each_local_batch(ctx,
                         [&](const ModelOutput& out, const torch::Tensor& labels) { means.add(out.features, labels); });
    if (!means.empty()) update.payload.class_vectors[kPrototypes] = means.means();
  }
};

class FedGhServer final : public ServerAlgorithm {
 public:
  FedGhServer(double lr, std::int64_t epochs, const FederationShape& shape) : lr_(lr), epochs_(epochs), shape_(shape) {}

  Payload broadcast(std::uint32_t) override {
    Payload p;
    if (head_) {
      p.tensors["head.weight"] = head_->weight.detach().clone();
      p.tensors["head.bias"] = head_->bias.detach().clone();
    }
    return p;
  }

  void aggregate(NamedTensors&, const std::vector<ClientUpdate>& updates, const AggregationInput&) override {
    const auto uploaded = stack_class_vectors(updates, kPrototypes, shape_.num_classes);
    if (uploaded.empty()) return;
    const auto& x = uploaded.rows;
    const auto& y = uploaded.labels;
    if (!head_) {
      head_ = torch::nn::Linear(x.size(1), shape_.num_classes);
      init_parameters(*head_, stream_seed(shape_.seed, "fedgh-head"));
    }
    if (head_->weight.size(1) != x.size(1)) throw DecodeError("prototype width differs from the global head's");
    torch::optim::SGD optimizer(head_->parameters(), torch::optim::SGDOptions(lr_));
    for (std::int64_t e = 0; e < epochs_; ++e) {
      optimizer.zero_grad();
      torch::nn::functional::cross_entropy(head_->forward(x), y).backward();
      optimizer.step();
    }
  }

  // The global head, once the first prototypes made it.
  void archive(StateArchive& ar) override {
    bool has = static_cast<bool>(head_);
    ar.value(has);
    std::int64_t width = has && !ar.loading() ? head_->weight.size(1) : 0;
    ar.value(width);
    if (!has) return;
    if (ar.loading()) head_ = torch::nn::Linear(width, shape_.num_classes);
    archive_module(ar, *head_);
  }

 private:
  double lr_;
  std::int64_t epochs_;
  FederationShape shape_;
  torch::nn::Linear head_{nullptr};
};

struct FedGhOptions {
  double server_lr = 0.01;  // SGD on the global head
  std::int64_t server_epochs = 100;
};

}  // namespace

AlgorithmInfo fedgh_info() {
  using O = FedGhOptions;
  const ParamTable<O> params{{
      bind_key<O>("server_lr", "server SGD learning rate for the global head", &O::server_lr)
          .range(0.0, std::nullopt, true),
      bind_key<O>("server_epochs", "full-batch server steps per round", &O::server_epochs).range(1.0, std::nullopt),
  }};
  auto info = algorithm_info(
      "fedgh", "FedGH: private feature extractors; the server trains a global head on class prototypes", params,
      [](const O&) { return std::make_unique<FedGhClient>(); },
      [](const O& o, const FederationShape& shape) {
        return std::make_unique<FedGhServer>(o.server_lr, o.server_epochs, shape);
      });
  info.private_models = true;
  info.reads_features = true;
  return info;
}

}  // namespace drift
