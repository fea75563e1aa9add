#pragma once
// When each edge of a hierarchy is online (docs/hierarchy.md#edge-availability): its own rule
// (always, or diurnal with its period, online fraction and phase), or under availability =
// "model" a client availability model of the catalogue, with the edges in the clients' place;
// and, over either, the outages the timeline scripts ([[timeline]] entries with `edge`).
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/config/scenario.hpp"

namespace drift {

class AvailabilityModel;

class EdgePresence {
 public:
  explicit EdgePresence(const Scenario& scenario);
  ~EdgePresence();
  EdgePresence(EdgePresence&&) noexcept;

  bool online(std::uint32_t edge, double t);
  // The first time >= t at which the edge is offline (t itself if offline now), or kNever.
  double next_offline(std::uint32_t edge, double t);
  // The first time >= t at which the edge is online (t itself if online now), or kNever.
  double next_online(std::uint32_t edge, double t);
  // The cloud round now starting: round-based participation processes step with it.
  void set_round(std::uint32_t cloud_round);
  // When an upload of `seconds` that may start at `ready` reaches the cloud, the edge sending it
  // whenever online and starting over each time it goes offline first; kNever if two tries in a
  // row are cut (an online stretch too short for it).
  double upload_arrival(std::uint32_t edge, double ready, double seconds);

 private:
  bool rule_online(std::uint32_t edge, double t);
  // The scripted outage holding t, as [from, until), or null.
  const std::pair<double, double>* outage_at(std::uint32_t edge, double t) const;

  const HierarchyConfig& hierarchy_;
  std::vector<std::vector<std::pair<double, double>>> outages_;  // per edge, ascending, disjoint
  std::vector<bool> by_model_;                                   // per edge: availability = "model"
  std::unique_ptr<AvailabilityModel> model_;                     // availability = "model" only
};

}  // namespace drift
