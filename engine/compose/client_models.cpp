#include "engine/compose/client_models.hpp"

#include <algorithm>

#include "engine/compose/packing.hpp"
#include "engine/core/error.hpp"
#include "engine/training/device_data.hpp"
#include "engine/training/local_training.hpp"
#include "engine/training/packed_model.hpp"

namespace drift {
namespace {

constexpr const char* kPrefix = "model/";

// Moves the client's weights out of its state (so they are not also copied to the device
// with the rest of the state) and into `model`; the architecture's initial weights the first
// time.
void restore_private(Model& model, Payload& state, const NamedTensors& initial) {
  NamedTensors own;
  for (const auto& t : initial) {
    auto it = state.tensors.find(private_weight_key(t.name));
    if (it == state.tensors.end()) continue;
    own.push_back({t.name, it->second});
    state.tensors.erase(it);
  }
  if (own.empty()) return load_state(model, initial);
  if (own.size() != initial.size())
    throw DecodeError("private state holds " + std::to_string(own.size()) + " of the " +
                      std::to_string(initial.size()) + " tensors of architecture '" + model.recipe().name + "'");
  load_state(model, own);
}

}  // namespace

std::string private_weight_key(const std::string& name) { return kPrefix + name; }

ClientModels::ClientModels(const Scenario& scenario, const FederationData& data, torch::Device device)
    : scenario_(scenario),
      data_(data),
      device_(device),
      train_(resident_on(data.data.train, device)),
      test_(resident_on(data.data.test, device)) {
  const auto* algorithm = find_algorithm(scenario.algorithm);
  private_models_ = algorithm != nullptr && algorithm->private_models;
  if (algorithm != nullptr && algorithm->packed) objective_ = algorithm->packed(scenario.algorithm_params);
}

ClientModels::Entry& ClientModels::entry_for(const std::string& name) {
  auto it = by_architecture_.find(name);
  if (it != by_architecture_.end()) return it->second;
  Entry e;
  e.model = make_architecture_model(scenario_, *data_.data.train, name);
  e.initial = state_of(*e.model);
  e.model->to(device_);
  if (!device_.is_cpu()) {
    // Graphs for drift's own image models: a TorchScript module may branch on its input or draw
    // random numbers, and a text model's recurrent kernels were never captured here.
    const auto* info = find_model(name);
    const bool capturable = info != nullptr && !info->text && !info->any_input;
    DeviceTrainer::Options options;
    options.graphs = scenario_.graphs && capturable;
    // Padded short batches make every step one graph; a model with batch statistics would see
    // the padding rows. Decided whether or not graphs are on, so that both give the same bits.
    options.pad_short_batches = capturable && !has_batch_statistics(*e.model);
    options.largest_client = largest_client();
    e.trainer = std::make_unique<DeviceTrainer>(*e.model, device_, options);
    e.packs = std::make_unique<PackStepper>(device_, options.graphs);
  }
  return by_architecture_.emplace(name, std::move(e)).first->second;
}

std::int64_t ClientModels::largest_client() const {
  std::int64_t largest = 0;
  for (const auto& client : data_.partition.indices)
    largest = std::max(largest, static_cast<std::int64_t>(client.size()));
  return largest;
}

Model& ClientModels::shared_model() { return *entry_for(scenario_.model).model; }

ClientUpdate ClientModels::train(ClientAlgorithm& algorithm, const TrainingTask& task, std::uint32_t client,
                                 Payload& state) {
  if (client >= data_.partition.indices.size()) throw DecodeError("job for unknown client " + std::to_string(client));
  auto& entry = entry_for(client_architecture(scenario_, client));
  auto& model = *entry.model;
  if (private_models_) {
    if (!task.weights.empty()) throw DecodeError("a private-model task carries weights");
    restore_private(model, state, entry.initial);
  }
  const auto& indices = data_.partition.indices[client];
  auto update = entry.trainer ? entry.trainer->train(algorithm, objective_ ? &*objective_ : nullptr, *train_, indices,
                                                     task, client, state, scenario_.seed, scenario_.data.augment)
                              : train_locally(model, algorithm, *train_, indices, task, client, state, scenario_.seed,
                                              device_, scenario_.data.augment);
  if (!private_models_) return update;
  for (auto& t : update.weights) state.tensors[private_weight_key(t.name)] = std::move(t.value);
  update.weights.clear();
  const auto [begin, end] = client_test_range(data_, client);
  update.personal = evaluate_range(model, *test_, begin, end, scenario_.evaluation.batch_size, device_);
  return update;
}

std::vector<PackOutcome> ClientModels::train_pack(const TrainingTask& task, const std::vector<std::uint32_t>& clients) {
  if (const auto why = pack_refusal(scenario_); !why.empty())
    throw DecodeError("a pack job for a scenario that does not pack: " + why);
  if (clients.empty() || clients.size() > scenario_.pack)
    throw DecodeError("a pack of " + std::to_string(clients.size()) + " clients (devices.pack is " +
                      std::to_string(scenario_.pack) + ")");
  std::vector<PackMember> members;
  for (auto c : clients) {
    if (c >= data_.partition.indices.size()) throw DecodeError("pack job for unknown client " + std::to_string(c));
    members.push_back({c, &data_.partition.indices[c]});
  }
  const auto objective = find_algorithm(scenario_.algorithm)->packed(scenario_.algorithm_params);
  auto& entry = entry_for(scenario_.model);
  // The CPU keeps the size groups whose bits the shipped scenarios record.
  if (!entry.packs)
    return train_packed(*entry.model, objective, *train_, task, members, scenario_.seed, device_,
                        scenario_.data.augment);
  // On a GPU every step of a pack is one shape, replayed from a graph (train_packed says when it
  // cannot be padded).
  PackOptions options;
  options.pad_to = std::min<std::int64_t>(task.hyper.batch_size, largest_client());
  return entry.packs->train(*entry.model, objective, *train_, task, members, scenario_.seed, scenario_.data.augment,
                            options);
}

}  // namespace drift
