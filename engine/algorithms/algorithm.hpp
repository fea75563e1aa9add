#pragma once
// The algorithm interface. An algorithm is two halves that never share memory:
//  - the client half runs inside a trainer slot, once per local training task;
//  - the server half owns the global model update.
// Parameters come from the scenario's [algorithm] table, declared as ParamSpecs so that
// validation, defaults and `drift list` need no per-algorithm code outside its own file.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/federated_types.hpp"
#include "engine/models/model.hpp"
#include "engine/scenario/param_spec.hpp"

namespace drift {

struct ClientContext {
  std::uint32_t client_id = 0;
  const TrainingTask& task;  // received weights, payload and hyper-parameters
  Payload& state;            // the client's private state, kept across its rounds
  Model& model;              // holds the received weights when begin() runs
};

class ClientAlgorithm {
 public:
  virtual ~ClientAlgorithm() = default;
  virtual void begin(ClientContext& ctx) {}
  // Loss of one batch; the default is mean cross-entropy on the logits.
  virtual torch::Tensor loss(const torch::Tensor& labels, const ModelOutput& out, ClientContext& ctx);
  // After the last local step: fill what to upload besides the weights.
  virtual void end(ClientContext& ctx, ClientUpdate& update) {}
};

class ServerAlgorithm {
 public:
  virtual ~ServerAlgorithm() = default;
  // Extras broadcast with the global weights in the next round's task.
  virtual Payload broadcast(std::uint32_t round) { return {}; }
  // `updates` are sorted by client id, so every floating-point sum has one fixed order.
  virtual void aggregate(NamedTensors& global, const std::vector<ClientUpdate>& updates,
                         std::uint32_t round) = 0;
};

// What a server half may need to know about the federation it serves.
struct FederationShape {
  std::uint32_t num_clients = 0;   // registered population (SCAFFOLD divides by it)
  std::int64_t num_classes = 0;
};

struct AlgorithmInfo {
  std::string name;
  std::string description;
  std::vector<ParamSpec> params;
  std::function<std::unique_ptr<ClientAlgorithm>(const ParamSet&)> make_client;
  std::function<std::unique_ptr<ServerAlgorithm>(const ParamSet&, const FederationShape&)> make_server;
};

const std::vector<AlgorithmInfo>& algorithm_catalog();
const AlgorithmInfo* find_algorithm(const std::string& name);
std::vector<std::string> algorithm_names();

}  // namespace drift
