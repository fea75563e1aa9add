#include "engine/population/edge_presence.hpp"

#include <algorithm>

#include "engine/core/rng.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/topology.hpp"

namespace drift {
namespace {

// The timeline's offline/online entries of each edge, in time order (ties in file order), as
// outages from an offline entry to the next online one (kNever: for good).
std::vector<std::vector<std::pair<double, double>>> scripted_outages(const Scenario& s) {
  std::vector<std::vector<std::pair<double, double>>> outages(s.hierarchy.edges);
  std::vector<const TimelineEntry*> entries;
  for (const auto& e : s.timeline)
    if (is_edge_outage(e)) entries.push_back(&e);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const TimelineEntry* a, const TimelineEntry* b) { return a->at_time < b->at_time; });
  std::vector<double> since(s.hierarchy.edges, -1.0);  // the open outage's start, or -1
  for (const auto* e : entries) {
    const auto edge = edge_by_text(s.hierarchy, e->edge);
    if (!edge) continue;  // validation refuses it
    const bool off = e->action == TimelineAction::offline;
    if (off && since[*edge] < 0) since[*edge] = e->at_time;
    if (!off && since[*edge] >= 0) {
      if (e->at_time > since[*edge]) outages[*edge].emplace_back(since[*edge], e->at_time);
      since[*edge] = -1.0;
    }
  }
  for (std::uint32_t k = 0; k < outages.size(); ++k)
    if (since[k] >= 0) outages[k].emplace_back(since[k], kNever);
  return outages;
}

}  // namespace

EdgePresence::EdgePresence(const Scenario& scenario)
    : hierarchy_(scenario.hierarchy), outages_(scripted_outages(scenario)) {
  for (std::uint32_t e = 0; e < hierarchy_.edges; ++e)
    by_model_.push_back(edge_profile(hierarchy_, e).availability == EdgeAvailability::model);
  // Its own seed, so that edge e does not come and go as client e does.
  if (std::find(by_model_.begin(), by_model_.end(), true) != by_model_.end())
    model_ = make_availability_model(hierarchy_.availability_model, hierarchy_.edges,
                                     make_stream(scenario.seed, "edge-availability").next_u64(), kNoGroup);
}

EdgePresence::~EdgePresence() = default;
EdgePresence::EdgePresence(EdgePresence&&) noexcept = default;

bool EdgePresence::rule_online(std::uint32_t edge, double t) {
  return by_model_[edge] ? model_->online(edge, t) : edge_online(hierarchy_, edge, t);
}

const std::pair<double, double>* EdgePresence::outage_at(std::uint32_t edge, double t) const {
  for (const auto& o : outages_[edge])
    if (o.first <= t && t < o.second) return &o;
  return nullptr;
}

bool EdgePresence::online(std::uint32_t edge, double t) { return !outage_at(edge, t) && rule_online(edge, t); }

double EdgePresence::next_offline(std::uint32_t edge, double t) {
  double next = by_model_[edge] ? model_->next_offline(edge, t) : edge_next_offline(hierarchy_, edge, t);
  for (const auto& o : outages_[edge])
    if (o.second > t) next = std::min(next, std::max(o.first, t));
  return next;
}

// Out of any outage, then to the rule's next online moment, until one lies outside every outage.
double EdgePresence::next_online(std::uint32_t edge, double t) {
  for (std::size_t step = 0; step <= outages_[edge].size() + 1 && t < kNever; ++step) {
    if (const auto* o = outage_at(edge, t)) t = o->second;
    if (t == kNever) break;
    t = by_model_[edge] ? model_->next_online(edge, t) : edge_next_online(hierarchy_, edge, t);
    if (t < kNever && !outage_at(edge, t)) return t;
  }
  return kNever;
}

void EdgePresence::set_round(std::uint32_t cloud_round) {
  if (model_) model_->set_round(cloud_round);
}

double EdgePresence::upload_arrival(std::uint32_t edge, double ready, double seconds) {
  double start = next_online(edge, ready);
  for (int tries = 0; tries < 2 && start < kNever; ++tries) {
    const double arrival = start + seconds;
    const double offline = next_offline(edge, start);
    if (offline >= arrival) return arrival;
    start = next_online(edge, offline);
  }
  return kNever;
}

}  // namespace drift
