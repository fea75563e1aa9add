#pragma once
// The sampler's side of the federation, plain C++ so tests drive it without actors; the
// sampler actor (actors/sampler.cpp) hosts one. It owns what selection depends on: the
// population's availability and registration, the timeline's sampler and fraction changes,
// and each client's sampling history (its last training loss, for power-of-choice). A round
// driver asks it for clients with a SelectionRequest and continues on the Selection.
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/presence.hpp"
#include "engine/population/world_timeline.hpp"
#include "engine/sampling/sampler.hpp"

namespace drift {

struct ClientLoss {
  std::uint32_t client = 0;
  double loss = 0.0;
};

// A timeline entry the driver applied, and when.
struct TimelineStep {
  std::uint32_t index = 0;  // into Scenario::timeline
  double time = 0.0;
};

struct SelectionRequest {
  std::uint32_t round = 0;  // round (sync) or aggregation index + 1 (async)
  double time = 0.0;        // virtual time of the selection
  // 0: a sync cohort, ceil(over_selection x the cohort size) clients in one draw; otherwise
  // up to `slots` clients drawn one at a time (async: one per free concurrency slot).
  std::uint32_t slots = 0;
  double over_selection = 1.0;
  std::vector<std::uint32_t> busy;     // ascending: clients not idle at `time`
  std::vector<ClientLoss> losses;      // training losses reported since the previous request
  std::vector<TimelineStep> timeline;  // timeline entries applied since the previous request
  // [hierarchy]: 0 draws from the whole population; e + 1 draws edge e's cohort from its own
  // clients (the sampler's cohort size then applies to the edge's clients).
  std::uint32_t edge = 0;
};

struct Selection {
  std::uint32_t round = 0;
  std::vector<std::uint32_t> clients;  // in the order drawn (ascending for a sync cohort)
  std::uint32_t cohort_size = 0;       // sync: the cohort before over-selection
  std::uint32_t eligible = 0;          // present and idle at the request's time
};

class CohortSampler {
 public:
  CohortSampler(const Scenario& scenario, std::shared_ptr<const Population> population);

  Selection answer(const SelectionRequest& request);
  // Saves or restores what later answers depend on (docs/checkpoints.md). Restore into a
  // sampler that has not answered yet.
  void archive(StateArchive& ar);

 private:
  void apply(const TimelineStep& step);
  // The present clients the request draws from (the population, or one edge's).
  std::uint32_t present_count(const SelectionRequest& request) const;
  std::uint32_t cohort_size(const SelectionRequest& request) const;
  bool in_scope(const SelectionRequest& request, std::uint32_t client) const {
    return request.edge == 0 || edges_.edge_of(client) + 1 == request.edge;
  }
  // `cohort`: the sync cohort size (unused for async slots).
  std::vector<std::uint32_t> draw(const SelectionRequest& request, std::uint32_t cohort,
                                  std::vector<std::uint32_t>& busy);

  const Scenario& scenario_;
  std::shared_ptr<const Population> population_;
  ClientAvailability availability_;
  Presence presence_;
  EdgeMembership edges_;  // the clients' edges, as the timeline's moves leave them
  WorldTimeline timeline_;
  std::unique_ptr<Sampler> sampler_;
  double fraction_override_ = 0.0;     // > 0 once the timeline sets it
  std::vector<double> last_loss_;      // per client, NaN before its first report
  std::vector<TimelineStep> applied_;  // every timeline step applied, in order
};

}  // namespace drift
