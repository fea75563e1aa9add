#include "engine/sim/async_jobs.hpp"

#include <algorithm>
#include <stdexcept>

#include "engine/sim/round_rules.hpp"
#include "engine/sim/sim_archive.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {
namespace {

// The time at which a job's outcome takes effect, once it is known.
double event_time(const InFlight& f, Roster& roster) {
  const auto& p = f.plan;
  if (!f.launched) return std::min(p.drop_time, roster.offline_between(p.client, p.start, p.earliest_finish));
  return outcome_time(p, f.outcome, roster);
}

}  // namespace

NextEvent earliest_event(const InFlightJobs& jobs, Roster& roster) {
  NextEvent e;
  for (const auto& [id, f] : jobs) {
    if (f.launched && !f.answered) continue;
    const double t = event_time(f, roster);
    if (!e.found || t < e.time || (t == e.time && f.plan.client < e.client)) e = {true, id, t, f.plan.client};
  }
  return e;
}

double running_bound(const InFlightJobs& jobs, Roster& roster, std::uint32_t& client) {
  double bound = kNever;
  for (const auto& [id, f] : jobs) {
    if (!f.launched || f.answered) continue;
    const auto& p = f.plan;
    const double t =
        std::min({p.earliest_finish, p.drop_time, roster.offline_between(p.client, p.start, p.earliest_finish)});
    if (t < bound || (t == bound && f.plan.client < client)) {
      bound = t;
      client = f.plan.client;
    }
  }
  return bound;
}

bool all_answered(const InFlightJobs& jobs) {
  for (const auto& [id, f] : jobs)
    if (f.launched && !f.answered) return false;
  return true;
}

void archive_jobs(StateArchive& ar, InFlightJobs& jobs) {
  // "jobs 2": an older checkpoint, whose plans lacked speed, latency and the partial-work steps,
  // is refused by name, not misread.
  ar.section("jobs 2");
  std::map<std::uint64_t, std::shared_ptr<const NamedTensors>> pulled;
  for (const auto& [id, f] : jobs) pulled[f.plan.model_version] = f.pulled;
  ar.map(pulled, [&](std::shared_ptr<const NamedTensors>& model) {
    auto copy = ar.loading() ? NamedTensors{} : *model;
    archive_named(ar, copy);
    if (ar.loading()) model = std::make_shared<const NamedTensors>(std::move(copy));
  });
  ar.map(jobs, [&](InFlight& f) {
    archive_plan(ar, f.plan);
    ar.value(f.launched);
    ar.value(f.answered);
    if (f.launched && !f.answered && !ar.loading()) throw std::logic_error("a job still running cannot be archived");
    if (f.answered) archive_outcome(ar, f.outcome);
  });
  if (!ar.loading()) return;
  for (auto& [id, f] : jobs) {
    if (f.launched && !f.answered) throw DecodeError("a checkpoint holds a job without its outcome");
    auto it = pulled.find(f.plan.model_version);
    if (it == pulled.end()) throw DecodeError("a checkpoint's job names a model version it does not hold");
    f.pulled = it->second;
  }
}

}  // namespace drift
