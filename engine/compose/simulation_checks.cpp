#include "engine/compose/simulation_checks.hpp"

#include <algorithm>

#include "engine/algorithms/algorithm.hpp"
#include "engine/core/error.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/edge_membership.hpp"
#include "engine/population/topology.hpp"

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

// Under cloud = fedbuff every edge runs at its own pace: nothing may count the edges' rounds
// together (a participation process steps with "the round"), and no cloud round samples edges.
namespace {

template <class Refuse>
void check_fedbuff_cloud(const Scenario& s, const Refuse& refuse) {
  const auto& h = s.hierarchy;
  if (h.edges_per_round > 0)
    refuse("edges_per_round = " + std::to_string(h.edges_per_round) +
           " samples edges for sync cloud rounds; under cloud = fedbuff every online edge pulls the global model "
           "when it is free");
  if (h.concurrency > static_cast<std::int64_t>(h.edges))
    refuse("concurrency = " + std::to_string(h.concurrency) + " is more than the " + std::to_string(h.edges) +
           " edges");
  const auto steps_with_rounds = [](const AvailabilityConfig& a) {
    return static_cast<bool>(availability_model(a.model).probabilities);
  };
  if (steps_with_rounds(s.availability))
    refuse("cloud = fedbuff: availability model '" + s.availability.model +
           "' steps with rounds, and each edge runs its rounds at its own pace; use a model in time");
  for (const auto& g : s.groups)
    if (steps_with_rounds(g.availability))
      refuse("cloud = fedbuff: group " + g.name + "'s availability model '" + g.availability.model +
             "' steps with rounds, and each edge runs its rounds at its own pace");
  for (std::uint32_t e = 0; e < h.edges; ++e)
    if (edge_profile(h, e).availability == EdgeAvailability::model && steps_with_rounds(h.availability_model))
      refuse("cloud = fedbuff: availability_model '" + h.availability_model.model +
             "' steps with cloud rounds, which the buffered cloud does not have; use a model in time");
}

// [[timeline]] entries with `edge`: an edge's outage, offline then online again, by time (its
// availability is asked ahead: will its model arrive before it goes offline?).
template <class Refuse>
void check_edge_outages(const Scenario& s, const Refuse& refuse) {
  for (const auto& e : s.timeline) {
    if (e.edge.empty() || e.action == TimelineAction::move) continue;
    const auto where = "timeline[" + std::to_string(e.index) + "] edge = \"" + e.edge + "\": ";
    if (e.action != TimelineAction::offline && e.action != TimelineAction::online)
      refuse(where + "an edge can be taken offline or brought back online, not action " + name_of(e.action));
    if (!e.group.empty()) refuse(where + "give an edge or a group, not both");
    if (e.at_time < 0)
      refuse(where +
             "an edge's outage is set by at_time: the driver asks ahead whether an edge stays online "
             "until its model arrives, which a round number does not say");
    if (!edge_by_text(s.hierarchy, e.edge)) refuse(where + "not one of " + edge_choices(s.hierarchy));
  }
}

// [[timeline]] moves: a group's clients report to another edge from a cloud round on. Only
// where the edges' server halves keep nothing per client or follow the moves (edge_moves; a
// plugin's row may not), and to an edge that exists.
template <class Refuse>
void check_client_moves(const Scenario& s, const AlgorithmInfo& algorithm, const Refuse& refuse) {
  for (const auto& e : s.timeline) {
    if (e.action != TimelineAction::move) continue;
    const auto where =
        "timeline[" + std::to_string(e.index) + "] moves group '" + e.group + "' to edge \"" + e.edge + "\": ";
    if (!move_destination(s.hierarchy, e.edge))
      refuse(where + "not one of " + edge_choices(s.hierarchy) + ", nor \"" + kHomeEdgeText +
             "\" (each client's assigned edge)");
    if (algorithm.edge_moves) continue;
    std::string names;
    for (const auto& row : algorithm_catalog())
      if (row.edge_moves) names += (names.empty() ? "" : ", ") + row.name;
    refuse(where + "'" + s.algorithm +
           "' does not say how its edge server halves follow clients between edges (its catalogue row's "
           "edge_moves: it keeps nothing per client, or regroups what it keeps). The algorithms whose clients "
           "can move: " +
           names);
  }
}

}  // namespace

// A hierarchy runs sync rounds at the edges, one server half per edge, and the cloud averages
// edge models (in rounds, or FedBuff's buffer): what cannot take part in that is refused here with the reason.
void check_hierarchy(const Scenario& s, const AlgorithmInfo& algorithm, const std::string& source) {
  const auto& h = s.hierarchy;
  if (!h.enabled()) {
    for (const auto& e : s.timeline)
      if (!e.edge.empty())
        throw UserError(source + ": timeline[" + std::to_string(e.index) + "] " +
                        (e.action == TimelineAction::move ? "moves group '" + e.group + "' to edge \"" + e.edge + "\""
                                                          : "takes edge \"" + e.edge + "\" offline or online") +
                        ", but the federation is flat (hierarchy.edges = 0)");
    return;
  }
  const auto refuse = [&](const std::string& why) { throw UserError(source + ": [hierarchy] " + why); };
  if (s.simulation.mode != SimulationMode::sync)
    refuse("runs sync rounds at the edges and at the cloud; simulation.mode = " + name_of(s.simulation.mode) +
           " is not built for edges yet");
  if (!algorithm.edge_tier) {
    std::string names;
    for (const auto& row : algorithm_catalog())
      if (row.edge_tier) names += (names.empty() ? "" : ", ") + row.name;
    refuse("cannot run '" + s.algorithm +
           "' at the edge tier: its server half keeps state for one federation's model " +
           "(a server optimiser, control variates, private models or exchanged knowledge), which the cloud's " +
           "average of edge models would not carry. The algorithms that run at the edges: " + names);
  }
  if (h.edges > s.clients)
    refuse("edges = " + std::to_string(h.edges) + " for " + std::to_string(s.clients) +
           " clients: an edge would hold no client");
  if (const auto& row = availability_model(h.availability_model.model); row.label_dependence)
    if (const auto why = row.label_dependence(h.availability_model.params); !why.empty())
      refuse("availability_model: " + why + ", and an edge has no labels of its own");
  if (h.assign == EdgeAssignment::file && h.file.empty())
    refuse("assign = file needs hierarchy.file, a CSV with columns client,edge");
  if (h.edges_per_round > static_cast<std::int64_t>(h.edges))
    refuse("edges_per_round = " + std::to_string(h.edges_per_round) + " is more than the " + std::to_string(h.edges) +
           " edges");
  if (h.cloud == EdgeCloud::fedbuff) check_fedbuff_cloud(s, refuse);
  check_edge_outages(s, refuse);
  check_client_moves(s, algorithm, refuse);
  if (s.privacy.mode != PrivacyMode::none)
    refuse("with [privacy]: the accountant and its ledgers count one tier of aggregation, not two");
  if (s.secure_aggregation.protocol != SecAggProtocol::none)
    refuse("with [secure_aggregation]: the protocol is simulated between clients and one server");
  if (s.simulation.shadow_clients > 0)
    refuse("with simulation.shadow_clients: shadow training measures a flat round's cohort");
  if (s.simulation.late_updates == LateUpdates::stale)
    refuse(
        "with simulation.late_updates = stale: a late update would have to wait at its edge across cloud rounds; "
        "use discard");
}

}  // namespace drift
