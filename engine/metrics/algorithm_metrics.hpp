#pragma once
// What an aggregation reports besides the model (Flower's MetricRecord): named scalars and
// per-client values (in the order of the aggregated updates, i.e. by client id), written to
// metrics.jsonl under "algorithm" so ablations can see FedSKC's rho, GDA weights and the like.
#include <map>
#include <string>
#include <vector>

namespace drift {

// Named lists of values: an aggregation's per-client values, or in a hierarchy each scalar of
// the edges' server halves, per edge id.
using NamedSeries = std::map<std::string, std::vector<double>>;

struct AlgorithmMetrics {
  std::map<std::string, double> scalars;
  NamedSeries per_client;
  bool empty() const { return scalars.empty() && per_client.empty(); }
};

}  // namespace drift
