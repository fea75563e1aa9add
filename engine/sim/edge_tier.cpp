#include "engine/sim/edge_tier.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/algorithms/aggregation.hpp"
#include "engine/core/rng.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/topology.hpp"
#include "engine/sim/drift_metrics.hpp"
#include "engine/tensors/tensor_archive.hpp"

namespace drift {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An edge's clients `now`, each with its place among `before` (both ascending population ids).
ClientRegroup client_regroup(const std::vector<std::uint32_t>& before, const std::vector<std::uint32_t>& now) {
  ClientRegroup r;
  r.clients = now;
  for (auto c : now) {
    const auto at = std::lower_bound(before.begin(), before.end(), c);
    r.previous.push_back(at != before.end() && *at == c ? std::optional<std::uint32_t>(at - before.begin())
                                                        : std::nullopt);
  }
  return r;
}

}  // namespace

EdgeTier::EdgeTier(const Scenario& scenario, const Population& population, const EdgeMembership& membership,
                   EdgeHost* host)
    : scenario_(scenario),
      population_(population),
      membership_(membership),
      host_(host),
      weights_(static_cast<std::size_t>(scenario.simulation.drift_window)),
      presence_(scenario) {
  if (!scenario.hierarchy.enabled()) return;
  buffered_ = scenario.hierarchy.cloud == EdgeCloud::fedbuff;
  if (buffered_) concurrency_ = static_cast<std::uint32_t>(scenario.hierarchy.concurrency);
  moves_ = moves_clients(scenario.timeline);
  edges_.resize(population.edges());
  regroup();
}

// Each edge's samples (its weight at the cloud), labels and share of the population's samples,
// from its clients now: at the start, and after the timeline moved clients between edges.
void EdgeTier::regroup() {
  membership_seen_ = membership_.changes();
  sample_shares_.clear();
  members_seen_.resize(edges_.size());
  for (std::uint32_t e = 0; e < edges_.size(); ++e) {
    auto& edge = edges_[e];
    const auto& members = membership_.members(e);
    if (members != members_seen_[e]) {
      if (membership_seen_ > 0) host_->regroup(e, client_regroup(members_seen_[e], members));
      members_seen_[e] = members;
    }
    edge.samples = 0;
    for (auto c : members) edge.samples += population_.num_samples[c];
    edge.label_counts = label_counts(population_, members);
    edge.labels = normalised(edge.label_counts);
    sample_shares_.push_back(static_cast<double>(edge.samples));
  }
  sample_shares_ = normalised(sample_shares_);
}

// The edges online at t, ascending; hierarchy.edges_per_round of them drawn from the
// ("edge-sample", round) stream when fewer are wanted.
std::vector<std::uint32_t> EdgeTier::sample_edges(std::uint32_t round, double t) {
  const auto& h = scenario_.hierarchy;
  std::vector<std::uint32_t> online;
  for (std::uint32_t e = 0; e < edges_.size(); ++e)
    if (presence_.online(e, t)) online.push_back(e);
  const auto wanted = static_cast<std::size_t>(h.edges_per_round);
  if (wanted == 0 || wanted >= online.size()) return online;
  Rng rng = make_stream(scenario_.seed, "edge-sample", {round});
  for (std::size_t i = 0; i < wanted; ++i) std::swap(online[i], online[i + rng.below(online.size() - i)]);
  online.resize(wanted);
  std::sort(online.begin(), online.end());
  return online;
}

void EdgeTier::begin(std::uint32_t round, double t, const NamedTensors& global, std::uint64_t model_bytes) {
  round_ = round;
  start_ = t;
  if (!hierarchical()) {
    flat_pending_ = true;
    flat_aggregated_.clear();
    flat_shares_.clear();
    return;
  }
  model_bytes_ = model_bytes;
  if (membership_seen_ != membership_.changes()) regroup();  // the timeline moved clients
  if (buffered_) return;  // the edges loop on their own (each waits to pull at 0 to begin with)
  presence_.set_round(round);
  order_ = sample_edges(round, t);
  edges_gone_ = false;
  if (order_.empty()) {  // every edge is offline: the cloud waits for the first to come back
    double back = kNever;
    for (std::uint32_t e = 0; e < edges_.size(); ++e) back = std::min(back, presence_.next_online(e, t));
    if (back < kNever) start_ = back, order_ = sample_edges(round, back);
    edges_gone_ = back == kNever;
  }
  for (auto& edge : edges_) edge.sampled = false;
  for (auto e : order_) {
    auto& edge = edges_[e];
    edge.sampled = true;
    edge.lost = edge.moved = edge.stopped = false;
    edge.rounds_run = 0;
    edge.aggregated.clear();
    edge.shares.clear();
    edge.metrics.clear();
    host_->pull(e, global);
    edge.clock = edge.began = start_ + link_seconds(e, false);
  }
}

// The model's trip over edge e's link, down or up.
double EdgeTier::link_seconds(std::uint32_t e, bool up) const {
  const auto link = edge_profile(scenario_.hierarchy, e);
  return edge_transfer_seconds(link.latency, static_cast<double>(model_bytes_),
                               up ? link.up_bandwidth : link.down_bandwidth);
}

std::vector<EdgeRound> EdgeTier::next_wave() {
  if (!hierarchical()) {
    if (!flat_pending_) return {};
    flat_pending_ = false;
    return {{kFlatEdge, round_, start_}};
  }
  const auto& h = scenario_.hierarchy;
  const auto per_loop = static_cast<std::uint32_t>(h.edge_rounds);
  std::vector<EdgeRound> wave;
  const auto next_round = [&](std::uint32_t e) {
    auto& edge = edges_[e];
    if (edge.lost || edge.stopped || edge.rounds_run >= per_loop) return;
    if (!presence_.online(e, edge.clock)) {  // it went offline between its rounds: its work is lost, or kept
      (h.keep_work && edge.rounds_run > 0 ? edge.stopped : edge.lost) = true;
      return;
    }
    // An edge round's serial: sync, (cloud round - 1) x edge_rounds + k; fedbuff, the edge's own count.
    const auto loop = buffered_ ? edge.loops : round_;
    wave.push_back({e, (loop - 1) * per_loop + edge.rounds_run + 1, edge.clock});
  };
  if (!buffered_)
    for (auto e : order_) next_round(e);
  else
    for (std::uint32_t e = 0; e < edges_.size(); ++e)
      if (edges_[e].phase == Edge::Phase::running) next_round(e);
  return wave;
}

void EdgeTier::localise(const EdgeRound& round, std::vector<ClientUpdate>& updates) const {
  if (round.edge == kFlatEdge) return;
  const auto& members = membership_.members(round.edge);
  for (auto& u : updates)
    u.client_id =
        static_cast<std::uint32_t>(std::lower_bound(members.begin(), members.end(), u.client_id) - members.begin());
}

void EdgeTier::globalise(const EdgeRound& round, std::vector<ClientUpdate>& updates, ClientShares& shares) const {
  if (round.edge == kFlatEdge) return;
  const auto& members = membership_.members(round.edge);
  for (auto& u : updates) u.client_id = members.at(u.client_id);
  for (auto& s : shares) s.first = members.at(s.first);
}

void EdgeTier::add_shares(Edge& edge, const ClientShares& shares) const {
  std::map<std::uint32_t, double> sum(edge.shares.begin(), edge.shares.end());
  for (const auto& [c, s] : shares) sum[c] += s;
  edge.shares.assign(sum.begin(), sum.end());
}

void EdgeTier::record_metrics(const EdgeRound& round, AlgorithmMetrics metrics,
                              const std::vector<std::uint32_t>& aggregated, RoundReport& report) {
  if (round.edge == kFlatEdge)
    report.algorithm = std::move(metrics);
  else
    edges_.at(round.edge).metrics.record(metrics, aggregated);
}

void EdgeTier::finish(const EdgeRound& round, double end, const std::vector<std::uint32_t>& aggregated,
                      ClientShares shares, bool moved) {
  if (round.edge == kFlatEdge) {
    flat_end_ = end;
    flat_aggregated_ = aggregated;
    flat_shares_ = std::move(shares);
    return;
  }
  auto& edge = edges_.at(round.edge);
  // The edge's server then aggregates what it accepted (hierarchy.aggregation_seconds each).
  const auto aggregating = edge_profile(scenario_.hierarchy, round.edge).aggregation_seconds;
  edge.clock = end + aggregating * static_cast<double>(aggregated.size());
  ++edge.rounds_run;
  edge.moved = edge.moved || moved;
  edge.aggregated.insert(edge.aggregated.end(), aggregated.begin(), aggregated.end());
  add_shares(edge, shares);
}

void EdgeTier::close(NamedTensors& global, RoundReport& report, std::function<void(CloudStep)> done) {
  if (!hierarchical()) return done({flat_end_, std::move(flat_aggregated_), std::move(flat_shares_)});
  if (buffered_) return after_models([this, &global, &report, done] { done(close_buffered(global, report)); });
  std::vector<std::uint32_t> reporting;
  const double end = close_edges(report, reporting);
  host_->models(reporting, [this, &global, &report, reporting, end, done](std::vector<NamedTensors> models) {
    CloudStep step;
    step.end = end;
    average_into(global, reporting, std::move(models), report, step);
    std::vector<std::pair<std::uint32_t, const EdgeMetrics*>> reported;
    for (auto e : reporting) reported.emplace_back(e, &edges_[e].metrics);
    report_edge_metrics(report, edges_.size(), reported, step.aggregated);
    weights_.push(report.edge_weight);
    report.edge_participation_bias = participation_bias();
    done(std::move(step));
  });
}

// The sampled edges' measures, in `report`, and which of them reported (`reporting`: their
// models reached the cloud in time). Returns when the cloud round ends.
double EdgeTier::close_edges(RoundReport& report, std::vector<std::uint32_t>& reporting) {
  const auto& h = scenario_.hierarchy;
  const double deadline_at = h.deadline > 0 ? start_ + h.deadline : kNever;
  size_edge_fields(report);
  double end = start_;
  for (auto e : order_) {
    auto& edge = edges_[e];
    report.edges_sampled.push_back(e);
    report.edge_bytes_down += model_bytes_;
    report.edge_updates[e] = static_cast<std::uint32_t>(edge.aggregated.size());
    report.edge_rounds_run[e] = edge.rounds_run;
    report.edge_busy_seconds[e] = edge.clock - edge.began;
    report.edge_cohort_tv[e] = cohort_tv(e, edge.aggregated);
    const double up = link_seconds(e, true);
    // Losing its work, any offline moment since the cloud round began loses the model; keeping
    // it, the edge sends once it is back online, starting over if it goes offline mid-upload
    // (kNever: the upload fits no online stretch, and the edge is lost when its rounds ended).
    const double arrival = h.keep_work ? presence_.upload_arrival(e, edge.clock, up) : edge.clock + up;
    const double lost_at = h.keep_work ? (arrival < kNever ? kNever : edge.clock) : presence_.next_offline(e, start_);
    if (edge.lost) {  // found offline before one of its rounds
      report.edges_lost.push_back(e);
      end = std::max(end, edge.clock);
    } else if (!edge.moved) {  // nothing aggregated: nothing to send
      report.edges_idle.push_back(e);
      end = std::max(end, edge.clock);
    } else if (arrival > deadline_at && arrival < kNever) {
      report.edges_late.push_back(e);
      report.edge_bytes_up += model_bytes_;
      end = std::max(end, deadline_at);
    } else if (lost_at < arrival) {  // it went offline before its model reached the cloud
      report.edges_lost.push_back(e);
      end = std::max(end, lost_at);
    } else {
      report.edges_reported.push_back(e);
      report.edge_bytes_up += model_bytes_;
      report.edge_arrival[e] = arrival;
      end = std::max(end, arrival);
      reporting.push_back(e);
    }
  }
  return end;
}

// The report's per-edge fields, one entry per edge: nothing yet.
void EdgeTier::size_edge_fields(RoundReport& report) const {
  const auto n = edges_.size();
  report.edge_updates.assign(n, 0);
  report.edge_weight.assign(n, 0.0);
  report.edge_arrival.assign(n, kNaN);
  report.edge_cohort_tv.assign(n, kNaN);
  report.edge_rounds_run.assign(n, 0);
  report.edge_busy_seconds.assign(n, kNaN);
  if (buffered_) report.edge_staleness.assign(n, kNaN);
  if (moves_)
    for (std::uint32_t e = 0; e < n; ++e)
      report.edge_clients.push_back(static_cast<std::uint32_t>(membership_.members(e).size()));
}

// The labels of the clients edge e aggregated against its own clients' (NaN: none, or no labels).
double EdgeTier::cohort_tv(std::uint32_t e, const std::vector<std::uint32_t>& aggregated) const {
  const auto& labels = edges_[e].labels;
  if (aggregated.empty() || labels.empty()) return kNaN;
  return total_variation(normalised(label_counts(population_, aggregated)), labels);
}

// The edges' cloud weights over the drift window against their sample shares (NaN: none in it).
double EdgeTier::participation_bias() const {
  const auto window = weights_.sum();
  const bool any = std::any_of(window.begin(), window.end(), [](double w) { return w > 0; });
  return any ? total_variation(normalised(window), sample_shares_) : kNaN;
}

// The reporting edges' clients' labels against the population's (NaN: none, or no labels).
double EdgeTier::reported_tv(const std::vector<std::uint32_t>& reporting) const {
  if (reporting.empty() || population_.histograms.empty()) return kNaN;
  std::vector<double> counts(population_.label_distribution.size(), 0.0);
  for (auto e : reporting)
    for (std::size_t k = 0; k < counts.size(); ++k) counts[k] += edges_[e].label_counts[k];
  return total_variation(normalised(counts), population_.label_distribution);
}

// The cloud's FedAvg over the reporting edges, weighted by their samples (one edge: its model as
// it is), and each client's share of the step: its edge's weight times its mean share there.
void EdgeTier::average_into(NamedTensors& global, const std::vector<std::uint32_t>& reporting,
                            std::vector<NamedTensors> models, RoundReport& report, CloudStep& step) {
  auto& aggregated = step.aggregated;
  auto& shares = step.shares;
  report.edge_reported_tv = reported_tv(reporting);
  if (reporting.empty()) return;
  double total = 0.0;
  for (auto e : reporting) total += static_cast<double>(edges_[e].samples);
  std::vector<ClientUpdate> updates;
  std::vector<double> weights;
  for (std::size_t k = 0; k < reporting.size(); ++k) {
    const auto e = reporting[k];
    auto& edge = edges_[e];
    const double weight = static_cast<double>(edge.samples) / total;
    report.edge_weight[e] = weight;
    const double rounds = static_cast<double>(edge.rounds_run);
    for (const auto& [c, s] : edge.shares) shares.emplace_back(c, weight * s / rounds);
    aggregated.insert(aggregated.end(), edge.aggregated.begin(), edge.aggregated.end());
    ClientUpdate u;
    u.client_id = e;
    u.num_samples = edge.samples;
    u.weights = std::move(models[k]);
    updates.push_back(std::move(u));
    weights.push_back(weight);
  }
  global = updates.size() == 1 ? std::move(updates.front().weights) : weighted_average(global, updates, weights);
  std::sort(shares.begin(), shares.end());
  std::sort(aggregated.begin(), aggregated.end());
  aggregated.erase(std::unique(aggregated.begin(), aggregated.end()), aggregated.end());
}

void EdgeTier::archive(StateArchive& ar) {
  if (!hierarchical()) return;  // a flat run's checkpoint is what it always was
  // A resume has replayed the timeline's moves by now: the server halves take the edges' clients
  // as they were at the checkpoint before they read what they kept of them.
  if (ar.loading() && membership_seen_ != membership_.changes()) regroup();
  weights_.archive(ar);
  for (std::uint32_t e = 0; e < edges_.size(); ++e) {
    ar.section("edge server half");
    host_->archive_server(e, ar);
  }
  if (buffered_) archive_buffered_state(ar);
}

}  // namespace drift
