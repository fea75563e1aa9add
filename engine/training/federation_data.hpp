#pragma once
// The data side of a federation: the dataset and who holds what. Every process (and every
// worker, later) rebuilds it from the scenario and seed; only models cross process borders.
#include <cstdint>
#include <vector>

#include "engine/data/dataset.hpp"
#include "engine/data/partition.hpp"
#include "engine/scenario/scenario.hpp"

namespace drift {

struct FederationData {
  DatasetSplits data;
  Partition partition;
  std::vector<std::vector<std::int64_t>> histograms;  // [client][class]
};

// Loads the dataset and partitions it. Throws UserError for anything a person must fix.
FederationData prepare_federation_data(const Scenario& scenario);

}  // namespace drift
