#pragma once
// The data side of a federation: the dataset and who holds what. Every process (and every
// worker, later) rebuilds it from the scenario and seed; only models cross process borders.
#include <cstdint>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/partition.hpp"
#include "engine/models/model.hpp"
#include "engine/population/population.hpp"
#include "engine/tensors/named_tensors.hpp"
#include "engine/training/devices.hpp"

namespace drift {

struct FederationData {
  DatasetSplits data;
  Partition partition;
  std::vector<std::vector<std::int64_t>> histograms;  // [client][class], training part
  std::vector<std::int64_t> client_test_sizes;        // each client's own test samples (family B, natural); else empty
  std::shared_ptr<const Population> population;       // groups and system profiles
};

// Loads the dataset, partitions it and builds the population (groups, profiles; availability
// traces are parsed too). Throws UserError for anything a person must fix, so that a run
// directory is only created for a scenario that can start.
FederationData prepare_federation_data(const Scenario& scenario);

// Family B (data.client_test_fraction = f > 0): `test` becomes every client's held-out part,
// ceil(f * n_k) of its shuffled share (stream "client-split"), in client order; `partition`
// keeps the rest. Returns the held-out sizes. Throws UserError for a client left without
// training samples.
std::vector<std::int64_t> hold_out_client_tests(DatasetSplits& data, Partition& partition, double fraction,
                                                std::uint64_t seed);

// partition.scheme = "natural" (LEAF): one client per writer (all of them, or a sample drawn from
// the "natural-writers" stream), and `test` reduced to those writers' own test samples in
// client order. Returns the test samples per client, or nothing when the test split's writers
// are not training writers (LEAF's split by writer: the test set stays whole and global).
std::vector<std::int64_t> take_natural_clients(DatasetSplits& data, Partition& partition, std::uint32_t clients,
                                               std::uint64_t seed);

// The scenario's device pool: devices.pool, or cpu x devices.cpu_slots (0: one per core).
std::vector<DeviceSlots> scenario_devices(const Scenario& scenario);

// The scenario's initial model, shaped as its algorithm asks (projection, head, levels).
std::shared_ptr<Model> make_scenario_model(const Scenario& scenario, const Dataset& train);

// The initial model of architecture `name` (one of model.group), shaped as the algorithm
// asks. Clients of one architecture start identical, as in PFLlib.
std::shared_ptr<Model> make_architecture_model(const Scenario& scenario, const Dataset& train, const std::string& name);

// Client `client`'s held-out test samples [begin, end) in the test set (family B).
std::pair<std::uint64_t, std::uint64_t> client_test_range(const FederationData& data, std::uint32_t client);

// Where each client's held-out test samples begin in the test set, then the end of the last
// client's: N + 1 offsets; empty when the test set is not made of clients' splits.
std::vector<std::uint64_t> client_test_starts(const FederationData& data);

// What a server half needs to know about the federation.
struct FederationShape;
// `shared_model`: the initial global model where the caller has built it already (it is
// built here otherwise, for the table budgets).
FederationShape federation_shape(const Scenario& scenario, const FederationData& data,
                                 const NamedTensors* shared_model = nullptr);

// [hierarchy]: the shape edge `edge`'s server half serves: the edge's clients, its cohort, and a
// state directory of its own (edge-<e> inside the shape's, made by whoever first writes there).
FederationShape edge_shape(const FederationShape& shape, const Scenario& scenario, const Population& population,
                           std::uint32_t edge);

// The algorithm's own checks with the whole federation, the built model included (a table of N
// models against algorithm.memory_budget_mb): throws UserError with the reason. prepare_federation_data
// runs it, so validate, run, resume and workers refuse before anything trains.
void check_algorithm_fits(const Scenario& scenario, const FederationData& data);

}  // namespace drift
