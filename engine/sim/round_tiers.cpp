// The composition of a sync run's round tier (engine/sim/round_tier.hpp): the one place that
// chooses between a flat federation and a cloud over edges.
#include "engine/config/scenario.hpp"
#include "engine/sim/driver.hpp"
#include "engine/sim/edge_host.hpp"
#include "engine/sim/edge_tier.hpp"

namespace drift {

std::unique_ptr<RoundTier> make_round_tier(DriverSetup& setup, const EdgeMembership& membership) {
  const auto& scenario = *setup.scenario;
  if (!scenario.hierarchy.enabled()) return make_flat_tier(scenario, std::move(setup.algorithm));
  // The host the setup brings (edges kept by workers), or one in this process.
  auto host = setup.edge_host ? std::move(setup.edge_host)
                              : make_local_edge_host(scenario, setup.population->edges(), setup.make_edge_algorithm);
  auto make = scenario.hierarchy.cloud == EdgeCloud::fedbuff ? make_buffered_cloud : make_sync_cloud;
  return make(scenario, *setup.population, membership, std::move(host), std::move(setup.algorithm));
}

// DriverSetup holds the edge host by a type driver.hpp only names.
DriverSetup::DriverSetup() = default;
DriverSetup::DriverSetup(DriverSetup&&) noexcept = default;
DriverSetup& DriverSetup::operator=(DriverSetup&&) noexcept = default;
DriverSetup::~DriverSetup() = default;

}  // namespace drift
