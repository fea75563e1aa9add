#pragma once
// The models a trainer slot trains: one per architecture, built on first use and reused for
// every client of that architecture. With private models (heterogeneous FL) a client's own
// weights travel in its private state under "model/<tensor>", so they wait in host memory (or
// on disk) while the client is idle and only the clients being trained occupy the device.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/federation_data.hpp"
#include "engine/training/device_trainer.hpp"
#include "engine/training/pack_stepper.hpp"
#include "engine/training/packed_training.hpp"

namespace drift {

class ClientModels {
 public:
  ClientModels(const Scenario& scenario, const FederationData& data, torch::Device device);

  // The global model's architecture (what evaluation jobs load weights into).
  Model& shared_model();
  // The test split where this slot's device reads it (compose/device_data).
  const Dataset& test_data() const { return *test_; }

  // Trains one client. Shared models: the task's weights in, the trained weights out in the
  // update. Private models: the client's weights (its architecture's initial weights on its
  // first round) in from `state`, back into `state` after training, none in the update, which
  // instead carries the trained model's accuracy on the client's held-out test split.
  ClientUpdate train(ClientAlgorithm& algorithm, const TrainingTask& task, std::uint32_t client, Payload& state);

  // Trains `clients` on one task as one pack (devices.pack). Throws DecodeError when the
  // scenario does not pack: the server never sends such a pack.
  std::vector<PackOutcome> train_pack(const TrainingTask& task, const std::vector<std::uint32_t>& clients);

 private:
  struct Entry {
    std::shared_ptr<Model> model;
    NamedTensors initial;  // the architecture's initial weights, on the CPU
    // Off the CPU: trains the model, keeping its buffers and CUDA graphs from job to job. The
    // CPU keeps train_locally, whose bits the shipped scenarios' digests record.
    std::unique_ptr<DeviceTrainer> trainer;
    std::unique_ptr<PackStepper> packs;  // off the CPU: packs, keeping their tensors and graphs
  };
  Entry& entry_for(const std::string& architecture);
  std::int64_t largest_client() const;  // samples of the largest client: no batch is padded past it

  const Scenario& scenario_;
  const FederationData& data_;
  torch::Device device_;
  std::shared_ptr<const Dataset> train_, test_;  // on device_ (the dataset itself on the CPU)
  bool private_models_ = false;
  std::optional<PackedObjective> objective_;  // the algorithm's, when it has one
  std::map<std::string, Entry> by_architecture_;
};

// Private-model state: the key of tensor `name` in a client's state.
std::string private_weight_key(const std::string& name);

}  // namespace drift
