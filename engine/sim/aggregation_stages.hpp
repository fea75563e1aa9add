#pragma once
// What a sync aggregation's accepted updates pass through between the clients and the server
// half, composed once from the scenario: secure aggregation's protocol (which may shrink the
// cohort, or abort the round) and differential privacy's clipping and noise (inside the
// protocol when both run), then the privacy ledger's entry. A scenario without them has
// stages that pass everything through, so the driver has no branch for either.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/sim/private_aggregation.hpp"
#include "engine/sim/secure_aggregation.hpp"

namespace drift {

class PrivacyBook;
struct AlgorithmInfo;

// Why the stages `s` turns on cannot run with `algorithm` ("" when they can): what every stage
// between the clients and the server half needs (one shared model whose server half reads only
// the updates' weights, and no raw update measured beside them), then each stage's own
// (refused_privacy, refused_secure_aggregation). Each reason names its stage's key.
std::string refused_aggregation_stages(const Scenario& s, const AlgorithmInfo& algorithm);

class AggregationStages {
 public:
  // `privacy`: the run's ledger ([privacy] runs only, else null).
  AggregationStages(const Scenario& scenario, const Population& population, PrivacyBook* privacy);

  // Secure aggregation over `accepted` (client-id order) from virtual time `start`: false when
  // it aborts; else `accepted` keeps its survivors and `end` becomes the protocol's end. True
  // without secure aggregation.
  bool secure(std::uint32_t round, double start, const NamedTensors& global, std::vector<ClientUpdate>& accepted,
              Roster& roster, RoundReport& report, double& end);

  // Clipping and noise on what the server half will see (secure aggregation did it inside its
  // protocol, when it runs).
  void privatise(const NamedTensors& global, std::vector<ClientUpdate>& accepted, std::uint32_t round);

  // The aggregation's entry in the privacy ledger (`released`: it summed updates into a new model).
  void record(RoundReport& report, const std::vector<std::uint32_t>& aggregated, bool released);

  void archive(StateArchive& ar);

 private:
  PrivacyBook* privacy_;
  std::optional<DpMechanism> dp_;           // [privacy]: clipping and noise before the server half
  std::optional<SecureAggregator> secagg_;  // [secure_aggregation]: the protocol over the accepted
};

}  // namespace drift
