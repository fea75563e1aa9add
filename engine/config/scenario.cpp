#include "engine/config/scenario.hpp"

#include <algorithm>
#include <cmath>

namespace drift {

const std::string& client_architecture(const Scenario& s, std::uint32_t client) {
  if (s.model_group.empty()) return s.model;
  if (!s.model_assignment.empty()) return s.model_group.at(s.model_assignment.at(client));
  return s.model_group[client % s.model_group.size()];
}

std::uint32_t SamplerConfig::cohort_size(std::uint32_t clients) const {
  if (clients_per_round > 0) return static_cast<std::uint32_t>(std::min<std::int64_t>(clients_per_round, clients));
  const auto n = static_cast<std::int64_t>(std::llround(fraction * clients));
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(n, 1, clients));
}

std::uint32_t aggregated_per_round(const Scenario& s) {
  switch (s.simulation.mode) {
    case SimulationMode::fedasync:
      return 1;
    case SimulationMode::fedbuff:
      return static_cast<std::uint32_t>(s.async.buffer_size);
    case SimulationMode::sync:
      break;
  }
  return s.sampler.cohort_size(s.clients);
}

}  // namespace drift
