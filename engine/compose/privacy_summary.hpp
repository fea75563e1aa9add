#pragma once
// summary.json's "privacy" object and participation.csv's epsilon column (docs/outputs.md#privacy).
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/metrics/summary.hpp"
#include "engine/privacy/run_epsilon.hpp"

namespace drift {

// The run's epsilon accountant, or null for a run without privacy.
std::shared_ptr<const privacy::RunEpsilon> run_epsilon(const Scenario& scenario);

// One line for validate and the run's log: the mechanism, and which epsilon is the guarantee
// and why; empty without privacy.
std::string privacy_description(const Scenario& scenario);
// One line for validate and the run's log on [secure_aggregation]; empty without it.
std::string secure_aggregation_description(const Scenario& scenario);

// The guarantee, what it assumes, the design's figure and whether it holds, and the spread of
// the clients' own epsilons over their realised participations (`aggregated`, per client).
nlohmann::json privacy_summary(const privacy::RunEpsilon& epsilon, const RunSummary& summary,
                               const std::vector<std::uint64_t>& aggregated);

}  // namespace drift
