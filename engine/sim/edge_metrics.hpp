#pragma once
// What the edges' server halves report of their aggregations (metrics(): MIFA's table, FedAU's
// weights), kept per edge over a cloud round (under the buffered cloud, over a loop) for the
// report of the step its model goes into: each scalar per edge in `edges.algorithm`, each
// per-client value in `algorithm`, in the order of the step's aggregated clients
// (docs/hierarchy.md#what-a-run-writes). One edge's server half alone does not speak for the cloud.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/metrics/round_report.hpp"

namespace drift {

struct EdgeMetrics {
  std::map<std::string, double> scalars;                              // from its last edge round
  std::map<std::string, std::map<std::uint32_t, double>> per_client;  // by population id, the latest

  // An edge round's values; `aggregated`: its clients (population ids) in the order of the lists.
  // A list of another length than `aggregated` cannot be told apart by client and is left out.
  void record(const AlgorithmMetrics& metrics, const std::vector<std::uint32_t>& aggregated);
  void clear();
  void archive(StateArchive& ar);
};

// report.edge_algorithm from the edges whose models the step took (edge id and its values; an
// edge twice: its later entry), NaN for the others of `edges` ids, and report.algorithm's
// per-client lists over `aggregated`, each client's latest value (NaN: none).
void report_edge_metrics(RoundReport& report, std::size_t edges,
                         const std::vector<std::pair<std::uint32_t, const EdgeMetrics*>>& reported,
                         const std::vector<std::uint32_t>& aggregated);

}  // namespace drift
