#include "engine/sim/simulation_core.hpp"

#include <cmath>

#include "engine/core/rng.hpp"

namespace drift {

SimulationCore::SimulationCore(DriverSetup& setup, JobRunner& runner, DriverListener& listener)
    : scenario_(*setup.scenario),
      population_(setup.population),
      availability_(scenario_, *population_),
      sampler_(make_sampler(scenario_.sampler.name, scenario_, *population_)),
      runner_(runner),
      listener_(listener),
      log_eligible_(setup.log_eligible),
      busy_(population_->size(), 0),
      busy_until_(population_->size(), 0.0),
      last_loss_(population_->size(), std::nan("")),
      participation_(population_->size(), 0),
      window_(static_cast<std::size_t>(scenario_.simulation.drift_window)),
      timeline_(scenario_.timeline),
      applied_(timeline_.size(), 0),
      speed_factor_(population_->group_names.size(), 1.0),
      join_time_(population_->group_names.size(), 0.0),
      leave_time_(population_->group_names.size(), kNever),
      deadline_(scenario_.simulation.deadline) {
  // Availability changes at a known time take effect exactly then, even in the middle of a
  // task; register them up front.
  for (std::size_t i = 0; i < timeline_.size(); ++i) {
    const auto& e = timeline_[i];
    if (e.at_time < 0) continue;
    const auto g = population_->group_index(e.group);
    using A = TimelineAction;
    if (e.action == A::offline || e.action == A::online || e.action == A::leave) {
      availability_.force(g, e.at_time, std::optional<bool>(e.action == A::online));
      if (e.action == A::leave) leave_time_[g] = std::min(leave_time_[g], e.at_time);
      applied_[i] = 1;
    } else if (e.action == A::join) {
      join_time_[g] = std::max(join_time_[g], e.at_time);
      applied_[i] = 1;
    }
  }
}

bool SimulationCore::present(std::uint32_t client, double t) const {
  const auto g = population_->group[client];
  if (g == kNoGroup) return true;
  return t >= join_time_[g] && t < leave_time_[g];
}

std::uint32_t SimulationCore::present_count(double t) const {
  std::uint64_t absent = 0;
  for (std::size_t g = 0; g < join_time_.size(); ++g)
    if (!(t >= join_time_[g] && t < leave_time_[g])) absent += population_->group_members[g].size();
  return static_cast<std::uint32_t>(population_->size() - absent);
}

std::uint32_t SimulationCore::cohort_size(double t) const {
  const auto present = present_count(t);
  if (fraction_override_ > 0.0) {
    const auto n = static_cast<std::int64_t>(std::llround(fraction_override_ * present));
    return static_cast<std::uint32_t>(std::clamp<std::int64_t>(n, present > 0 ? 1 : 0, present));
  }
  return std::min(scenario_.sampler.cohort_size(population_->size()), present);
}

std::vector<std::uint32_t> SimulationCore::select(std::uint32_t round, double t, std::uint32_t count) {
  SelectionContext ctx;
  ctx.round = round;
  ctx.time = t;
  ctx.count = count;
  ctx.eligible = [this, t](std::uint32_t c) { return eligible(c, t); };
  ctx.online = [this, t](std::uint32_t c) { return availability_.online(c, t); };
  ctx.last_loss = &last_loss_;
  return sampler_->select(ctx);
}

TaskPlan SimulationCore::plan(std::uint32_t client, double start, std::uint64_t down_bytes, std::uint64_t version) {
  const auto& sys = population_->system[client];
  const auto g = population_->group[client];
  const double speed = sys.speed * (g == kNoGroup ? 1.0 : speed_factor_[g]);
  TaskPlan p;
  p.job = next_job_++;
  p.client = client;
  p.start = start;
  p.down_bytes = down_bytes;
  p.model_version = version;
  p.up_bandwidth = sys.up_bandwidth;
  p.download_end = start + sys.latency + static_cast<double>(down_bytes) / sys.down_bandwidth;
  const double samples = static_cast<double>(population_->num_samples[client]) * scenario_.training.local_epochs;
  p.compute_end = p.download_end + samples / speed;
  p.earliest_finish = p.compute_end + sys.latency;
  if (scenario_.simulation.dropout > 0.0) {
    Rng rng = make_stream(scenario_.seed, "dropout", {p.job});
    if (rng.uniform() < scenario_.simulation.dropout) p.drop_time = start + rng.uniform() * (p.earliest_finish - start);
  }
  return p;
}

double SimulationCore::offline_between(std::uint32_t client, double from, double until) {
  const auto g = population_->group[client];
  double gone = kNever;
  if (g != kNoGroup && leave_time_[g] < until) gone = std::max(from, leave_time_[g]);
  return std::min(gone, availability_.offline_between(client, from, until));
}

void SimulationCore::apply_timeline(std::uint32_t round, double t) {
  for (std::size_t i = 0; i < timeline_.size(); ++i) {
    if (applied_[i]) continue;
    const auto& e = timeline_[i];
    const bool due = e.at_round > 0 ? e.at_round <= static_cast<std::int64_t>(round) : e.at_time <= t;
    if (!due) continue;
    applied_[i] = 1;
    const auto g = e.group.empty() ? kNoGroup : population_->group_index(e.group);
    switch (e.action) {
      case TimelineAction::offline: availability_.force(g, t, false); break;
      case TimelineAction::online: availability_.force(g, t, true); break;
      case TimelineAction::leave:
        availability_.force(g, t, false);
        leave_time_[g] = std::min(leave_time_[g], t);
        break;
      case TimelineAction::join: join_time_[g] = t; break;
      case TimelineAction::speed: speed_factor_[g] = e.value; break;
      case TimelineAction::sampler: sampler_ = make_sampler(e.sampler, scenario_, *population_); break;
      case TimelineAction::fraction: fraction_override_ = e.value; break;
      case TimelineAction::deadline: deadline_ = e.value; break;
    }
  }
}

double SimulationCore::next_timed_entry() const {
  double next = kNever;
  for (std::size_t i = 0; i < timeline_.size(); ++i)
    if (!applied_[i] && timeline_[i].at_time >= 0) next = std::min(next, timeline_[i].at_time);
  return next;
}

void SimulationCore::account(RoundReport& r, const std::vector<std::uint32_t>& aggregated) {
  r.aggregated = aggregated;
  std::vector<double> counts(population_->label_distribution.size(), 0.0);
  for (auto c : aggregated) {
    if (participation_[c]++ == 0) ++participants_;
    if (!population_->histograms.empty())
      for (std::size_t k = 0; k < counts.size(); ++k) counts[k] += static_cast<double>(population_->histograms[c][k]);
  }
  r.coverage = population_->size() ? static_cast<double>(participants_) / population_->size() : 0.0;
  if (counts.empty()) return;
  const auto& population = population_->label_distribution;
  if (!aggregated.empty()) {
    const auto cohort = normalised(counts);
    r.cohort_tv = total_variation(cohort, population);
    r.cohort_js = jensen_shannon_distance(cohort, population);
  } else {
    r.cohort_tv = r.cohort_js = std::nan("");  // nothing aggregated: undefined (null in JSON)
  }
  window_.push(std::move(counts));
  const auto windowed = normalised(window_.sum());
  r.window_tv = total_variation(windowed, population);
  r.window_js = jensen_shannon_distance(windowed, population);
}

void SimulationCore::add_training_metrics(RoundReport& r, const std::vector<ClientUpdate>& updates) {
  double loss = 0.0, accuracy = 0.0;
  for (const auto& u : updates) {
    r.samples += u.num_samples;
    loss += u.metrics.loss * static_cast<double>(u.num_samples);
    accuracy += u.metrics.accuracy * static_cast<double>(u.num_samples);
  }
  if (r.samples > 0) {
    r.train_loss = loss / static_cast<double>(r.samples);
    r.train_accuracy = accuracy / static_cast<double>(r.samples);
  }
}

HyperParams SimulationCore::hyper_for(std::uint32_t round) const {
  HyperParams h = scenario_.training;
  h.learning_rate *= std::pow(h.lr_decay, static_cast<double>(round > 0 ? round - 1 : 0));
  return h;
}

void SimulationCore::record_eligible(RoundReport& r, double t) {
  if (!log_eligible_) return;
  r.eligible = 0;
  for (std::uint32_t c = 0; c < population_->size(); ++c) {
    if (!eligible(c, t)) continue;
    ++r.eligible;
    ClientRecord rec;
    rec.client_id = c;
    rec.event = "eligible";
    rec.time = t;
    r.clients.push_back(rec);
  }
}

}  // namespace drift
