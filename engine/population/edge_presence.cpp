#include "engine/population/edge_presence.hpp"

#include <algorithm>

#include "engine/core/rng.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/topology.hpp"

namespace drift {

EdgePresence::EdgePresence(const Scenario& scenario) : hierarchy_(scenario.hierarchy) {
  for (std::uint32_t e = 0; e < hierarchy_.edges; ++e)
    by_model_.push_back(edge_profile(hierarchy_, e).availability == EdgeAvailability::model);
  // Its own seed, so that edge e does not come and go as client e does.
  if (std::find(by_model_.begin(), by_model_.end(), true) != by_model_.end())
    model_ = make_availability_model(hierarchy_.availability_model, hierarchy_.edges,
                                     make_stream(scenario.seed, "edge-availability").next_u64(), kNoGroup);
}

EdgePresence::~EdgePresence() = default;
EdgePresence::EdgePresence(EdgePresence&&) noexcept = default;

bool EdgePresence::online(std::uint32_t edge, double t) {
  return by_model_[edge] ? model_->online(edge, t) : edge_online(hierarchy_, edge, t);
}

double EdgePresence::next_offline(std::uint32_t edge, double t) {
  return by_model_[edge] ? model_->next_offline(edge, t) : edge_next_offline(hierarchy_, edge, t);
}

double EdgePresence::next_online(std::uint32_t edge, double t) {
  return by_model_[edge] ? model_->next_online(edge, t) : edge_next_online(hierarchy_, edge, t);
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
