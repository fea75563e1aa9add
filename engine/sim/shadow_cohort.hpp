#pragma once
// The opt-in "shadow" clients of a sync round (simulation.shadow_clients = N): a seeded uniform
// sample of N clients that were not selected, from the training population (held-out clients
// never train, so they are no part of the population's update), trained from the round's task without touching
// their state, timing or participation, and never aggregated. Their updates estimate the
// population's aggregate update, so each round reports how far the cohort's is from it
// (update_drift). They cost N more training jobs per round.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/metrics/round_report.hpp"
#include "engine/population/population.hpp"
#include "engine/sim/driver.hpp"

namespace drift {

class ShadowCohort {
 public:
  ShadowCohort(const Scenario& scenario, const Population& population) : scenario_(scenario), population_(population) {}

  // Draws this round's shadow clients among those not in `cohort` and launches their jobs;
  // returns how many it launched (the round waits for them too).
  std::size_t launch(std::uint32_t round, const std::vector<std::uint32_t>& cohort,
                     const std::shared_ptr<const TrainingTask>& task, JobRunner& runner);
  bool owns(std::uint64_t job) const { return jobs_.count(job) > 0; }
  // False when the job was answered already.
  bool answer(std::uint64_t job, JobOutcome outcome);
  // Fills the report's update drift from this round's fresh aggregated updates, then forgets
  // the round's shadow jobs.
  void report(RoundReport& report, const NamedTensors& global, const std::vector<ClientUpdate>& aggregated,
              std::uint64_t version);
  void archive(StateArchive& ar);

 private:
  struct Job {
    std::uint32_t client = 0;
    bool answered = false;
    JobOutcome outcome;
  };
  const Scenario& scenario_;
  const Population& population_;
  std::uint64_t not_selected_ = 0;
  std::uint64_t next_job_ = 0;
  std::map<std::uint64_t, Job> jobs_;
};

}  // namespace drift
