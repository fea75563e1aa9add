#include "engine/compose/simulation_checks.hpp"

#include <algorithm>

#include "engine/core/error.hpp"

namespace drift {

// Partial work cuts a straggler's steps at a sync round's deadline: it needs both. Stragglers
// are drawn from a sync round's cohort.
void check_partial_work(const Scenario& s, const std::string& source) {
  if (s.simulation.stragglers > 0 && s.simulation.mode != SimulationMode::sync)
    throw UserError(source + ": simulation.stragglers draws a sync round's cohort; " + name_of(s.simulation.mode) +
                    " has none");
  if (!s.simulation.partial_work) return;
  const auto refuse = [&](const std::string& why) { throw UserError(source + ": simulation.partial_work " + why); };
  if (s.simulation.mode != SimulationMode::sync)
    refuse("cuts work at a sync round's deadline; under " + name_of(s.simulation.mode) + " there is none");
  const bool timed = std::any_of(s.timeline.begin(), s.timeline.end(),
                                 [](const TimelineEntry& e) { return e.action == TimelineAction::deadline; });
  if (s.simulation.deadline <= 0.0 && !timed)
    refuse("cuts a straggler's work at the round's deadline: set simulation.deadline (or a timeline deadline entry)");
}

void check_per_client_evaluation(const Scenario& s, bool private_models, bool natural_clients,
                                 const std::string& source) {
  if (s.held_out > 0.0 && !s.held_out_group.empty())
    throw UserError(source +
                    ": federation.held_out and federation.held_out_group each choose the held-out clients: set one");
  if (s.evaluation.per_client == 0) return;
  if (private_models)
    throw UserError(source + ": evaluation.per_client scores the shared global model on each client's split; '" +
                    s.algorithm + "' keeps private models, which are scored per client already (client_accuracy)");
  if (s.data.client_test_fraction <= 0.0 && !natural_clients)
    throw UserError(source +
                    ": evaluation.per_client scores the global model on each client's held-out split: set "
                    "data.client_test_fraction (PFLlib: 0.25), or use natural clients");
}

}  // namespace drift
