#include "engine/sim/round_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/core/durations.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/topology.hpp"

namespace drift {
namespace {

double quantile(std::vector<double> sorted, double q) {
  if (sorted.empty()) return 0.0;
  const auto i =
      static_cast<std::size_t>(std::min<double>(sorted.size() - 1, std::floor(q * static_cast<double>(sorted.size()))));
  return sorted[i];
}

}  // namespace

RoundEstimate estimate_rounds(const Scenario& s, const Population& p, std::uint64_t model_bytes) {
  std::vector<double> tasks;
  const double bytes = static_cast<double>(model_bytes);
  for (std::uint32_t c = 0; c < p.size(); ++c) {
    const auto& sys = p.system[c];
    const double samples = local_samples_per_round(s.training, p.num_samples[c]);
    tasks.push_back(2 * sys.latency + bytes / sys.down_bandwidth + samples / sys.speed + bytes / sys.up_bandwidth);
  }
  std::sort(tasks.begin(), tasks.end());
  RoundEstimate e;
  if (tasks.empty()) return e;
  e.task_median = quantile(tasks, 0.5);
  e.task_max = tasks.back();
  if (s.simulation.mode == SimulationMode::sync) {
    // The slowest of k clients drawn at random sits near the k/(k+1) quantile. Under
    // [hierarchy] that is an edge round of an edge's cohort, and a cloud round is edge_rounds of
    // them between the edge-cloud link's two transfers.
    const auto& h = s.hierarchy;
    const auto drawn_from = h.enabled() ? std::max(1u, s.clients / h.edges) : s.clients;
    const double k = std::ceil(s.sampler.cohort_size(drawn_from) * s.simulation.over_selection);
    const double needed = s.sampler.cohort_size(drawn_from);
    e.round = quantile(tasks, needed / (k + 1.0));
    e.basis = "the slowest of " + std::to_string(static_cast<long long>(needed)) + " clients";
    if (s.simulation.deadline > 0 && s.simulation.deadline < e.round) {
      e.round = s.simulation.deadline;
      e.basis = "the deadline";
    }
    if (h.enabled()) {
      double slowest = 0.0;      // the slowest edge's link, down and up
      double aggregating = 0.0;  // the slowest edge server's time per update
      for (std::uint32_t edge = 0; edge < h.edges; ++edge) {
        const auto profile = edge_profile(h, edge);
        slowest = std::max(slowest, edge_transfer_seconds(profile.latency, bytes, profile.down_bandwidth) +
                                        edge_transfer_seconds(profile.latency, bytes, profile.up_bandwidth));
        aggregating = std::max(aggregating, profile.aggregation_seconds);
      }
      e.round = static_cast<double>(h.edge_rounds) * (e.round + needed * aggregating) + slowest;
      e.edge_loop = e.round;
      e.basis = std::to_string(h.edge_rounds) + " edge round(s) of " + e.basis +
                (aggregating > 0 ? " and their aggregation" : "") + ", and the slowest edge-cloud link";
      if (h.deadline > 0 && h.deadline < e.round) {  // (the loop outlasts it: a warning says so)
        e.basis = "the cloud's deadline, which a loop of about " + human_duration(e.round) + " outlasts";
        e.round = h.deadline;
      }
      if (h.cloud == EdgeCloud::fedbuff) {  // the online edges loop side by side; a step takes `buffer` models
        double at_work = std::max(1.0, expected_online_edges(h));
        if (h.concurrency > 0) at_work = std::min(at_work, static_cast<double>(h.concurrency));
        e.round *= static_cast<double>(h.buffer) / at_work;
        e.basis = std::to_string(h.buffer) + " edge model(s) from " + std::to_string(std::lround(at_work)) +
                  " edges at work, each loop " + e.basis;
      }
    }
  } else {
    const double per = s.simulation.mode == SimulationMode::fedbuff ? static_cast<double>(s.async.buffer_size) : 1.0;
    const double at_work = std::min<double>(static_cast<double>(s.async.concurrency), p.size());
    e.round = e.task_median * per / at_work;
    e.basis = std::to_string(static_cast<long long>(per)) + " update(s) from " +
              std::to_string(static_cast<long long>(at_work)) + " clients at work";
  }
  e.run = e.round * s.rounds;
  if (s.simulation.max_virtual_time > 0) e.run = std::min(e.run, s.simulation.max_virtual_time);
  return e;
}

std::vector<std::string> edge_loop_warnings(const Scenario& s, const RoundEstimate& e) {
  std::vector<std::string> out;
  const auto& h = s.hierarchy;
  if (!h.enabled() || e.edge_loop <= 0.0) return out;
  const std::string loop = "an edge's loop (" + std::to_string(h.edge_rounds) +
                           " edge round(s) and its link both ways) takes about " + human_duration(e.edge_loop);
  const std::string never =
      h.cloud == EdgeCloud::fedbuff
          ? ", and the buffered cloud may never step (the run then ends after hierarchy.stall_loops such loops)"
          : "";
  if (h.deadline > 0 && e.edge_loop > h.deadline)
    out.push_back(loop + ", longer than hierarchy.deadline (" + human_duration(h.deadline) +
                  "): most edge models will arrive late" + never +
                  ". Raise hierarchy.deadline, or lower hierarchy.edge_rounds");
  if (h.keep_work) return out;
  std::string cut;
  std::uint32_t count = 0;
  double stretch = 0.0;
  for (std::uint32_t edge = 0; edge < h.edges; ++edge) {
    const auto p = edge_profile(h, edge);
    if (p.availability != EdgeAvailability::diurnal || p.online_fraction * p.period >= e.edge_loop) continue;
    cut += (cut.empty() ? "" : ", ") + (p.name.empty() ? std::to_string(edge) : p.name);
    stretch = std::max(stretch, p.online_fraction * p.period);
    ++count;
  }
  if (count == 0) return out;
  out.push_back((count == h.edges ? std::string("every edge is") : "edge(s) " + cut + " are") +
                " online for stretches of at most " + human_duration(stretch) + ", but " + loop +
                ": with hierarchy.keep_work = false nearly every such loop is cut before its model reaches the cloud" +
                never + ". Set hierarchy.keep_work = true, or raise online_fraction or period");
  return out;
}

std::vector<std::string> virtual_time_warnings(const Scenario& s, const RoundEstimate& e) {
  auto out = edge_loop_warnings(s, e);
  // The longest cycle of any availability model in use.
  double cycle = 0.0;
  std::string model;
  auto consider = [&](const AvailabilityConfig& a) {
    const auto& row = availability_model(a.model);
    const double c = row.cycle_seconds ? row.cycle_seconds(a.params) : 0.0;
    if (c > cycle) {
      cycle = c;
      model = a.model;
    }
  };
  consider(s.availability);
  for (const auto& g : s.groups) consider(g.availability);
  if (cycle <= 0.0 || e.run <= 0.0 || e.run >= cycle) return out;
  std::string text = "the run spans about " + human_duration(e.run) + " of virtual time, less than one " + model +
                     " availability cycle (" + human_duration(cycle) + "): who is online will barely change";
  if (s.data.max_train_samples > 0) text += "; data.max_train_samples shrinks every client's task, and so virtual time";
  out.push_back(text + ". Raise federation.rounds, or lower profile.speed to keep the same day");
  return out;
}

}  // namespace drift
