#include "engine/sim/aggregation_stages.hpp"

#include "engine/sim/privacy_book.hpp"

namespace drift {

AggregationStages::AggregationStages(const Scenario& scenario, const Population& population, PrivacyBook* privacy)
    : privacy_(privacy) {
  if (privacy_) dp_.emplace(scenario.privacy, scenario.seed, expected_cohort(scenario));
  if (scenario.secure_aggregation.protocol != SecAggProtocol::none) secagg_.emplace(scenario, population);
}

bool AggregationStages::secure(std::uint32_t round, double start, const NamedTensors& global,
                               std::vector<ClientUpdate>& accepted, Roster& roster, RoundReport& report, double& end) {
  return !secagg_ || secagg_->run(round, start, global, accepted, roster, dp_ ? &*dp_ : nullptr, report, end);
}

void AggregationStages::privatise(const NamedTensors& global, std::vector<ClientUpdate>& accepted,
                                  std::uint32_t round) {
  if (dp_ && !secagg_) dp_->privatise(global, accepted, round);
}

void AggregationStages::record(RoundReport& report, const std::vector<std::uint32_t>& aggregated, bool released) {
  if (!privacy_) return;
  const auto stats = dp_->take_stats();
  privacy_->record(report, aggregated, released, stats.clipped, released ? stats.clip : dp_->clip(), stats.noise_std);
}

void AggregationStages::archive(StateArchive& ar) {
  if (dp_) dp_->archive(ar);
}

}  // namespace drift
