#include "engine/sim/edge_metrics.hpp"

#include <limits>

namespace drift {

void EdgeMetrics::record(const AlgorithmMetrics& metrics, const std::vector<std::uint32_t>& aggregated) {
  for (const auto& [name, value] : metrics.scalars) scalars[name] = value;
  for (const auto& [name, values] : metrics.per_client) {
    if (values.size() != aggregated.size()) continue;
    auto& by_client = per_client[name];
    for (std::size_t k = 0; k < values.size(); ++k) by_client[aggregated[k]] = values[k];
  }
}

void EdgeMetrics::clear() {
  scalars.clear();
  per_client.clear();
}

void EdgeMetrics::archive(StateArchive& ar) {
  ar.map(scalars, [&](double& value) { ar.value(value); });
  ar.map(per_client, [&](std::map<std::uint32_t, double>& by_client) {
    ar.map(by_client, [&](double& value) { ar.value(value); });
  });
}

void report_edge_metrics(RoundReport& report, std::size_t edges,
                         const std::vector<std::pair<std::uint32_t, const EdgeMetrics*>>& reported,
                         const std::vector<std::uint32_t>& aggregated) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::map<std::string, std::map<std::uint32_t, double>> per_client;
  for (const auto& [edge, metrics] : reported) {
    for (const auto& [name, value] : metrics->scalars) {
      auto& series = report.edge_algorithm[name];
      series.resize(edges, kNaN);
      series.at(edge) = value;
    }
    for (const auto& [name, by_client] : metrics->per_client)
      for (const auto& [client, value] : by_client) per_client[name][client] = value;
  }
  for (const auto& [name, by_client] : per_client) {
    auto& list = report.algorithm.per_client[name];
    for (auto c : aggregated) {
      const auto it = by_client.find(c);
      list.push_back(it == by_client.end() ? kNaN : it->second);
    }
  }
}

}  // namespace drift
