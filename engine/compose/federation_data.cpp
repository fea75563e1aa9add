#include "engine/compose/federation_data.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "engine/algorithms/algorithm.hpp"
#include "engine/algorithms/model_changes.hpp"
#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/population/availability.hpp"
#include "engine/training/device_data.hpp"

namespace drift {
namespace {

std::vector<std::int64_t> int64_values(const torch::Tensor& t) {
  return {t.data_ptr<std::int64_t>(), t.data_ptr<std::int64_t>() + t.numel()};
}

}  // namespace

FederationData prepare_federation_data(const Scenario& scenario) {
  FederationData fed;
  fed.data = load_dataset(scenario.data);
  if (const auto& a = scenario.data.augment; !a.mean.empty()) normalise_channels(fed.data, a.mean, a.std);
  const double held_out = scenario.data.client_test_fraction;
  if (held_out > 0.0) {
    // One pool, as PFLlib merges the official splits before partitioning.
    auto pool = std::make_shared<Dataset>(*fed.data.train);
    pool->images = torch::cat({fed.data.train->images, fed.data.test->images});
    pool->labels = torch::cat({fed.data.train->labels, fed.data.test->labels});
    if (pool->domains.defined()) pool->domains = torch::cat({fed.data.train->domains, fed.data.test->domains});
    fed.data.train = pool;
  }
  const auto labels = int64_values(fed.data.train->labels);
  std::vector<std::int64_t> domains;
  if (const auto& d = fed.data.train->domains; d.defined()) domains = int64_values(d);
  const bool by_writer = partition_scheme(scenario.partition.scheme).source == PartitionSource::writers;
  if (by_writer) {
    fed.client_test_sizes = take_natural_clients(fed.data, fed.partition, scenario.clients, scenario.seed);
    if (fed.client_test_sizes.empty() &&
        (find_algorithm(scenario.algorithm)->private_models || scenario.evaluation.per_client > 0))
      throw UserError(std::string(scenario.evaluation.per_client > 0
                                      ? "evaluation.per_client scores"
                                      : "algorithm '" + scenario.algorithm + "' evaluates") +
                      " every client's model on its own test data, but no test sample of '" + scenario.data.dataset +
                      "' belongs to a training writer "
                      "(LEAF split it by writer): regenerate it split by sample (preprocess.sh --t sample)");
  } else {
    fed.partition = make_partition(scenario.partition, labels, fed.data.train->num_classes, scenario.clients,
                                   scenario.seed, domains);
  }
  if (held_out > 0.0) fed.client_test_sizes = hold_out_client_tests(fed.data, fed.partition, held_out, scenario.seed);
  if (scenario.training.drop_last && scenario.training.local_steps == 0) {
    std::size_t largest = 0;
    for (const auto& share : fed.partition.indices) largest = std::max(largest, share.size());
    // Every job would train zero steps and report its untouched model as an update.
    if (static_cast<std::size_t>(scenario.training.batch_size) > largest)
      throw UserError("training.batch_size = " + std::to_string(scenario.training.batch_size) +
                      " with training.drop_last is larger than every client's training data (the largest holds " +
                      std::to_string(largest) + " samples): no client would take a step");
  }
  // Nothing to evaluate the global model on: every evaluation would wait for results that never come.
  if (fed.data.test->size() == 0)
    throw UserError("data.dataset = \"" + scenario.data.dataset + "\" has no test samples (its test split is empty" +
                    std::string(by_writer ? ", e.g. a LEAF test/*.json that lists no users" : "") +
                    "): the global model could never be evaluated; give it a test split");
  fed.histograms = class_histograms(fed.partition, labels, fed.data.train->num_classes);
  fed.population = std::make_shared<const Population>(build_population(scenario, fed.histograms));
  ClientAvailability check(scenario, *fed.population);  // parses and checks availability traces
  check_algorithm_fits(scenario, fed);
  // A module brought from a file meets the data's shape here, before any run directory exists.
  if (const auto* name = file_architecture(scenario)) make_architecture_model(scenario, *fed.data.train, *name);
  return fed;
}

}  // namespace drift

namespace drift {

std::vector<std::int64_t> hold_out_client_tests(DatasetSplits& data, Partition& partition, double fraction,
                                                std::uint64_t seed) {
  std::vector<std::int64_t> test_indices, sizes;
  for (std::size_t k = 0; k < partition.indices.size(); ++k) {
    auto share = partition.indices[k];
    Rng rng = make_stream(seed, "client-split", {k});
    rng.shuffle(share);
    // sklearn's train_test_split rounds the test part up.
    const auto n_test = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(share.size())));
    if (n_test >= share.size())
      throw UserError("client " + std::to_string(k) + " holds " + std::to_string(share.size()) +
                      " samples: holding out data.client_test_fraction = " + std::to_string(fraction) +
                      " leaves it none to train on; raise partition.min_client_samples");
    std::vector<std::int64_t> held(share.begin(), share.begin() + static_cast<std::ptrdiff_t>(n_test));
    std::sort(held.begin(), held.end());
    test_indices.insert(test_indices.end(), held.begin(), held.end());
    sizes.push_back(static_cast<std::int64_t>(n_test));
    partition.indices[k].assign(share.begin() + static_cast<std::ptrdiff_t>(n_test), share.end());
    std::sort(partition.indices[k].begin(), partition.indices[k].end());
  }
  auto test = std::make_shared<Dataset>(*data.train);
  const auto index = torch::tensor(test_indices, torch::kInt64);
  test->images = data.train->images.index_select(0, index);
  test->labels = data.train->labels.index_select(0, index);
  // Held-out parts are in client order, not domain order: per-domain figures do not apply.
  test->domains = torch::Tensor();
  test->domain_names.clear();
  data.test = test;
  return sizes;
}

std::vector<std::int64_t> take_natural_clients(DatasetSplits& data, Partition& partition, std::uint32_t clients,
                                               std::uint64_t seed) {
  const auto& train = *data.train;
  if (!train.owners.defined())
    throw UserError(
        "partition.scheme = \"natural\" needs a dataset whose samples name their writers (femnist, shakespeare)");
  Rng rng = make_stream(seed, "natural-writers");
  auto natural =
      partition_natural(int64_values(train.owners), static_cast<std::int64_t>(train.owner_names.size()), clients, rng);
  for (std::size_t k = 0; k < natural.writers.size(); ++k)
    if (natural.partition.indices[k].empty())
      throw UserError("writer '" + train.owner_names[static_cast<std::size_t>(natural.writers[k])] +
                      "' has no training samples, so its client could not train");
  partition = std::move(natural.partition);
  // Each chosen writer's own test samples, in client order; none at all means LEAF split by
  // writer, and the whole test split stays the (global) test set.
  std::vector<std::vector<std::int64_t>> tests_of(train.owner_names.size());
  const auto test_owners = int64_values(data.test->owners);
  for (std::size_t i = 0; i < test_owners.size(); ++i)
    if (test_owners[i] >= 0) tests_of[static_cast<std::size_t>(test_owners[i])].push_back(static_cast<std::int64_t>(i));
  std::vector<std::int64_t> test_indices, sizes;
  for (const auto writer : natural.writers) {
    const auto& own = tests_of[static_cast<std::size_t>(writer)];
    test_indices.insert(test_indices.end(), own.begin(), own.end());
    sizes.push_back(static_cast<std::int64_t>(own.size()));
  }
  if (test_indices.empty()) return {};
  auto test = std::make_shared<Dataset>(*data.test);
  const auto index = torch::tensor(test_indices, torch::kInt64);
  test->images = data.test->images.index_select(0, index);
  test->labels = data.test->labels.index_select(0, index);
  test->owners = data.test->owners.index_select(0, index);
  data.test = test;
  return sizes;
}

std::vector<DeviceSlots> scenario_devices(const Scenario& scenario) {
  if (!scenario.device_pool.empty()) {
    auto devices = parse_device_pool(scenario.device_pool);
    require_devices(devices);
    use_deterministic_kernels(devices);
    return devices;
  }
  return parse_device_pool(scenario.cpu_slots > 0 ? "cpu:" + std::to_string(scenario.cpu_slots) : "cpu");
}

std::shared_ptr<Model> make_architecture_model(const Scenario& scenario, const Dataset& train,
                                               const std::string& name) {
  ModelOptions options;
  const auto* algorithm = find_algorithm(scenario.algorithm);
  if (algorithm != nullptr && algorithm->model_options) options = algorithm->model_options(scenario.algorithm_params);
  options.width = scenario.model_width;
  options.feature_dim = scenario.feature_dim;
  options.shared_seed = scenario.seed;
  options.script_file = scenario.model_file;
  options.script_digest = scenario.model_digest;
  options.script_weights = scenario.model_init == ModelInit::file;
  options.script_backbone = algorithm != nullptr && algorithm->reads_features;
  return make_model(name, train.input_shape(), train.num_classes, scenario.seed, options);
}

std::shared_ptr<Model> make_scenario_model(const Scenario& scenario, const Dataset& train) {
  return make_architecture_model(scenario, train, scenario.model);
}

std::pair<std::uint64_t, std::uint64_t> client_test_range(const FederationData& data, std::uint32_t client) {
  const auto& sizes = data.client_test_sizes;
  if (client >= sizes.size()) throw UserError("client " + std::to_string(client) + " has no held-out test split");
  std::uint64_t begin = 0;
  for (std::uint32_t k = 0; k < client; ++k) begin += static_cast<std::uint64_t>(sizes[k]);
  return {begin, begin + static_cast<std::uint64_t>(sizes[client])};
}

std::vector<std::uint64_t> client_test_starts(const FederationData& data) {
  std::vector<std::uint64_t> starts;
  if (data.client_test_sizes.empty()) return starts;
  starts.push_back(0);
  for (auto n : data.client_test_sizes) starts.push_back(starts.back() + static_cast<std::uint64_t>(n));
  if (starts.back() != static_cast<std::uint64_t>(data.data.test->size()))
    throw std::logic_error("the clients' held-out splits do not make up the test set");
  return starts;
}

FederationShape federation_shape(const Scenario& scenario, const FederationData& data,
                                 const NamedTensors* shared_model) {
  const auto& train = *data.data.train;
  FederationShape shape;
  shape.num_clients = data.population->size();
  if (scenario.hierarchy.enabled() && moves_clients(scenario.timeline)) shape.most_clients = shape.num_clients;
  shape.num_classes = train.num_classes;
  shape.cohort = aggregated_per_round(scenario);
  shape.input_shape = train.input_shape();
  shape.pixel_mean = train.pixel_mean;
  shape.pixel_std = train.pixel_std;
  shape.channel_mean = train.channel_mean;
  shape.channel_std = train.channel_std;
  shape.seed = scenario.seed;
  shape.local_lr = [training = scenario.training](std::uint32_t round) {
    return learning_rate_of_round(training, round);
  };
  shape.local_momentum = scenario.training.momentum;
  if (shared_model != nullptr)
    shape.model_bytes = floating_bytes(*shared_model);
  else if (!find_algorithm(scenario.algorithm)->private_models)
    shape.model_bytes = floating_bytes(state_of(*make_scenario_model(scenario, train)));
  // Built on first use only: an availability trace is parsed again when it is.
  struct Lazy {
    Scenario scenario;
    std::shared_ptr<const Population> population;
    std::unique_ptr<ClientAvailability> availability;
  };
  auto lazy = std::make_shared<Lazy>(Lazy{scenario, data.population, nullptr});
  shape.participation_probability = [lazy](std::uint32_t client, std::uint32_t round) {
    if (!lazy->availability)
      lazy->availability = std::make_unique<ClientAvailability>(lazy->scenario, *lazy->population);
    return lazy->availability->probability(client, round);
  };
  return shape;
}

void check_algorithm_fits(const Scenario& scenario, const FederationData& data) {
  const auto& algorithm = *find_algorithm(scenario.algorithm);
  if (!algorithm.check) return;
  if (const auto message = algorithm.check(scenario.algorithm_params, federation_shape(scenario, data));
      !message.empty())
    throw UserError((scenario.source.empty() ? "" : scenario.source + ": ") + message);
}

FederationShape edge_shape(const FederationShape& shape, const Scenario& scenario, const Population& population,
                           std::uint32_t edge) {
  FederationShape out = shape;
  const auto members = static_cast<std::uint32_t>(population.edge_members.at(edge).size());
  out.num_clients = members;
  out.cohort = scenario.sampler.cohort_size(members);
  // Its server half knows the edge's clients by their place among them (engine/sim/edge_tier.hpp).
  out.client_ids = population.edge_members.at(edge);
  if (!out.state_dir.empty())
    out.state_dir = (std::filesystem::path(out.state_dir) / ("edge-" + std::to_string(edge))).string();
  return out;
}

}  // namespace drift
