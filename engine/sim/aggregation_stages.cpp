#include "engine/sim/aggregation_stages.hpp"

#include "engine/algorithms/algorithm.hpp"
#include "engine/sim/privacy_book.hpp"

namespace drift {
namespace {

std::string refused_by_every_stage(const Scenario& s, const AlgorithmInfo& algorithm) {
  if (algorithm.private_models)
    return "algorithm '" + s.algorithm + "' keeps private models that are never aggregated into a shared one";
  if (!algorithm.privatisable)
    return "algorithm '" + s.algorithm +
           "' uploads more than its weights (knowledge, control variates) or reads more of an update than them, "
           "which the stage does not cover; drift list marks the algorithms that can ([dp])";
  if (s.simulation.shadow_clients > 0)
    return "simulation.shadow_clients measures the raw updates, which the server never sees here";
  return "";
}

}  // namespace

std::string refused_aggregation_stages(const Scenario& s, const AlgorithmInfo& algorithm) {
  const auto stage = [&](const std::string& key, const std::string& own) -> std::string {
    auto why = refused_by_every_stage(s, algorithm);
    if (why.empty()) why = own;
    return why.empty() ? "" : key + ": " + why;
  };
  if (s.privacy.mode != PrivacyMode::none)
    if (auto why = stage("privacy.mode = \"" + name_of(s.privacy.mode) + "\"", refused_privacy(s)); !why.empty())
      return why;
  if (s.secure_aggregation.protocol != SecAggProtocol::none)
    return stage("secure_aggregation.protocol = \"" + name_of(s.secure_aggregation.protocol) + "\"",
                 refused_secure_aggregation(s));
  return "";
}

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

void AggregationStages::record(RoundReport& report, const std::vector<std::uint32_t>& aggregated, bool released,
                               const DpMechanism::Stats& dp) {
  if (privacy_) privacy_->record(report, aggregated, released, dp.clipped, dp.clip, dp.noise_std);
}

void AggregationStages::buffer(const ClientUpdate& update, const NamedTensors& pulled, double weight,
                               std::uint32_t round) {
  dp_->accumulate(buffer_sum_, update.weights, flat_floats(pulled), weight, update.client_id, round);
}

std::pair<NamedTensors, DpMechanism::Stats> AggregationStages::release_buffer(const NamedTensors& global,
                                                                              std::uint32_t count, double server_lr,
                                                                              std::uint32_t round) {
  dp_->add_central_noise(buffer_sum_, round);
  const double denominator = dp_->denominator(count);
  auto next = add_flat(global, buffer_sum_, server_lr / denominator);
  buffer_sum_.clear();
  dp_->finish(count, denominator, round);
  return {std::move(next), dp_->take_stats()};
}

void AggregationStages::archive(StateArchive& ar) {
  if (dp_) dp_->archive(ar);
}

void AggregationStages::archive_buffer(StateArchive& ar) {
  if (!dp_) return;
  ar.values(buffer_sum_);
  dp_->archive(ar);
}

}  // namespace drift
