#pragma once
// State and rules shared by the synchronous and asynchronous drivers: the virtual clock, who
// is present and online, task timing, dropouts, the timeline, participation and drift.
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "engine/sampling/sampler.hpp"
#include "engine/population/availability.hpp"
#include "engine/sim/driver.hpp"
#include "engine/sim/drift_metrics.hpp"

namespace drift {

// When a task of one client starts, when its computation ends at the earliest, and
// whether and when it drops out.
struct TaskPlan {
  std::uint64_t job = 0;
  std::uint32_t client = 0;
  double start = 0.0;
  double download_end = 0.0;
  double compute_end = 0.0;
  double earliest_finish = 0.0;  // compute end + one latency; the upload adds bytes / bandwidth
  double drop_time = kNever;     // from the dropout probability (offline periods are checked later)
  double up_bandwidth = 1.0;
  std::uint64_t down_bytes = 0;
  std::uint64_t model_version = 0;
  double finish(std::uint64_t upload_bytes) const { return earliest_finish + static_cast<double>(upload_bytes) / up_bandwidth; }
};

class SimulationCore {
 public:
  SimulationCore(DriverSetup& setup, JobRunner& runner, DriverListener& listener);

 protected:
  bool present(std::uint32_t client, double t) const;
  bool eligible(std::uint32_t client, double t) const {
    return present(client, t) && !busy_[client] && busy_until_[client] <= t;
  }
  std::uint32_t present_count(double t) const;
  std::uint32_t cohort_size(double t) const;  // from the sampler's count or fraction, maybe changed by the timeline
  std::vector<std::uint32_t> select(std::uint32_t round, double t, std::uint32_t count);
  TaskPlan plan(std::uint32_t client, double start, std::uint64_t down_bytes, std::uint64_t model_version);
  // First time in [from, until) the client is offline or gone, or kNever.
  double offline_between(std::uint32_t client, double from, double until);

  // Timeline entries due at the start of `round`, or at a time <= t, not applied yet.
  void apply_timeline(std::uint32_t round, double t);
  double next_timed_entry() const;  // virtual time of the next at_time entry not yet applied, or kNever

  // Fills participation, drift and coverage for the clients of an aggregation.
  void account(RoundReport& report, const std::vector<std::uint32_t>& aggregated);
  void record_eligible(RoundReport& report, double t);
  // Sample count and sample-weighted training loss and accuracy of the aggregated updates.
  static void add_training_metrics(RoundReport& report, const std::vector<ClientUpdate>& updates);
  // The scenario's hyper-parameters with the learning rate decayed to `round`.
  HyperParams hyper_for(std::uint32_t round) const;

  const Scenario& scenario_;
  std::shared_ptr<const Population> population_;
  ClientAvailability availability_;
  std::unique_ptr<Sampler> sampler_;
  JobRunner& runner_;
  DriverListener& listener_;
  bool log_eligible_;

  double now_ = 0.0;
  std::uint64_t next_job_ = 0;
  std::vector<char> busy_;           // has a task whose outcome is not applied yet
  std::vector<double> busy_until_;   // sync: a late client works on until its update arrives
  std::vector<double> last_loss_;
  std::vector<std::uint32_t> participation_;
  std::uint64_t participants_ = 0;
  DriftWindow window_;

  // Timeline state.
  std::vector<TimelineEntry> timeline_;
  std::vector<char> applied_;
  std::vector<double> speed_factor_;   // per group
  std::vector<double> join_time_;      // per group: absent before
  std::vector<double> leave_time_;     // per group: gone from
  double fraction_override_ = 0.0;     // > 0 once the timeline sets it
  double deadline_;
};

}  // namespace drift
