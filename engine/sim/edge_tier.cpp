#include "engine/sim/edge_tier.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "engine/algorithms/model_changes.hpp"
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
                   std::unique_ptr<EdgeHost> host, std::unique_ptr<ServerAlgorithm> cloud_half)
    : scenario_(scenario),
      population_(population),
      membership_(membership),
      host_(std::move(host)),
      cloud_half_(std::move(cloud_half)),
      weights_(static_cast<std::size_t>(scenario.simulation.drift_window)),
      presence_(scenario) {
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

void EdgeTier::begin_cloud_round(std::uint32_t round, double t, const NamedTensors& global) {
  round_ = round;
  start_ = t;
  model_bytes_ = floating_bytes(global);
  if (membership_seen_ != membership_.changes()) regroup();  // the timeline moved clients
}

// The model's trip over edge e's link, down or up.
double EdgeTier::link_seconds(std::uint32_t e, bool up) const {
  const auto link = edge_profile(scenario_.hierarchy, e);
  return edge_transfer_seconds(link.latency, static_cast<double>(model_bytes_),
                               up ? link.up_bandwidth : link.down_bandwidth);
}

void EdgeTier::add_round(std::uint32_t e, std::uint32_t loop, std::vector<TierRound>& wave) {
  const auto& h = scenario_.hierarchy;
  const auto per_loop = static_cast<std::uint32_t>(h.edge_rounds);
  auto& edge = edges_[e];
  if (edge.lost || edge.stopped || edge.rounds_run >= per_loop) return;
  if (!presence_.online(e, edge.clock)) {  // it went offline between its rounds: its work is lost, or kept
    (h.keep_work && edge.rounds_run > 0 ? edge.stopped : edge.lost) = true;
    return;
  }
  // An edge round's serial: its loop's first is (loop - 1) x edge_rounds + 1.
  wave.push_back({e, (loop - 1) * per_loop + edge.rounds_run + 1, edge.clock});
}

void EdgeTier::task(const TierRound& round, std::uint64_t version, const NamedTensors&, TaskReady ready) {
  host_->task(round.edge, round.serial, version, std::move(ready));
}

const NamedTensors* EdgeTier::start_model(const TierRound& round, std::uint32_t client) const {
  return host_->start_model(round.edge, client);
}

void EdgeTier::aggregate(const TierRound& round, NamedTensors&, std::vector<ClientUpdate> updates,
                         const AggregationInput& input, Aggregated done) {
  const auto& members = membership_.members(round.edge);
  for (auto& u : updates)
    u.client_id =
        static_cast<std::uint32_t>(std::lower_bound(members.begin(), members.end(), u.client_id) - members.begin());
  host_->aggregate(round.edge, std::move(updates), input, [this, edge = round.edge, done](EdgeAggregated a) {
    if (a.moved) {
      const auto& now = membership_.members(edge);
      for (auto& s : a.shares) s.first = now.at(s.first);
    }
    done(std::move(a));
  });
}

void EdgeTier::add_shares(Edge& edge, const ClientShares& shares) const {
  std::map<std::uint32_t, double> sum(edge.shares.begin(), edge.shares.end());
  for (const auto& [c, s] : shares) sum[c] += s;
  edge.shares.assign(sum.begin(), sum.end());
}

void EdgeTier::finish(const TierRound& round, double end, const std::vector<std::uint32_t>& aggregated,
                      EdgeAggregated result, RoundReport&) {
  auto& edge = edges_.at(round.edge);
  if (result.moved) edge.metrics.record(result.metrics, aggregated);
  // The edge's server then aggregates what it accepted (hierarchy.aggregation_seconds each).
  const auto aggregating = edge_profile(scenario_.hierarchy, round.edge).aggregation_seconds;
  edge.clock = end + aggregating * static_cast<double>(aggregated.size());
  ++edge.rounds_run;
  edge.moved = edge.moved || result.moved;
  edge.aggregated.insert(edge.aggregated.end(), aggregated.begin(), aggregated.end());
  add_shares(edge, result.shares);
}

void EdgeTier::after_host(std::function<void()> next) {
  host_->settle([this, next] { after_models(next); });
}

// The report's per-edge fields, one entry per edge: nothing yet.
void EdgeTier::size_edge_fields(RoundReport& report, bool staleness) const {
  const auto n = edges_.size();
  report.edge_updates.assign(n, 0);
  report.edge_weight.assign(n, 0.0);
  report.edge_arrival.assign(n, kNaN);
  report.edge_cohort_tv.assign(n, kNaN);
  report.edge_rounds_run.assign(n, 0);
  report.edge_busy_seconds.assign(n, kNaN);
  if (staleness) report.edge_staleness.assign(n, kNaN);
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

void EdgeTier::archive(StateArchive& ar) {
  ar.section("server half");
  cloud_half_->archive(ar);
  // A resume has replayed the timeline's moves by now: the server halves take the edges' clients
  // as they were at the checkpoint before they read what they kept of them.
  if (ar.loading() && membership_seen_ != membership_.changes()) regroup();
  weights_.archive(ar);
  for (std::uint32_t e = 0; e < edges_.size(); ++e) {
    ar.section("edge server half");
    host_->archive_server(e, ar);
  }
  archive_cloud(ar);
}

}  // namespace drift
