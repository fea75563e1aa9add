#pragma once
// The registered clients as the simulator sees them: data size, label histogram, group and
// system profile. Built once from the scenario and the partition; plain arrays, so a
// population of a million clients costs tens of megabytes.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"

namespace drift {

inline constexpr std::uint32_t kNoGroup = std::numeric_limits<std::uint32_t>::max();

struct ClientSystem {
  double speed = 1.0;         // samples per second
  double up_bandwidth = 1.0;  // bytes per second
  double down_bandwidth = 1.0;
  double latency = 0.0;  // seconds each way
};

struct Population {
  std::vector<std::uint64_t> num_samples;
  std::vector<std::vector<std::int64_t>> histograms;      // may be empty (synthetic populations)
  std::vector<std::uint32_t> group;                       // index into group_names, or kNoGroup
  std::vector<std::string> group_names;                   // scenario.groups order
  std::vector<std::vector<std::uint32_t>> group_members;  // ascending ids per group
  std::vector<ClientSystem> system;
  std::vector<double> label_distribution;  // of the whole population
  std::vector<char> held_out;              // by client: never eligible (federation.held_out); empty: none
  // [hierarchy]: each client's edge, and each edge's clients ascending; empty in a flat federation.
  std::vector<std::uint32_t> edge;
  std::vector<std::vector<std::uint32_t>> edge_members;
  std::int64_t num_classes = 0;

  std::uint32_t size() const { return static_cast<std::uint32_t>(num_samples.size()); }
  std::uint32_t group_index(const std::string& name) const;  // kNoGroup if unknown
  bool is_held_out(std::uint32_t client) const { return !held_out.empty() && held_out[client] != 0; }
  std::uint32_t edges() const { return static_cast<std::uint32_t>(edge_members.size()); }
};

// Assigns groups (first matching rule in group order) and draws system profiles from the
// ("profile", client) and ("group", g, client) streams. Throws UserError on bad group rules
// (labels out of range, ids past the population), a malformed profile trace, or a [hierarchy]
// that leaves an edge without clients.
Population build_population(const Scenario& scenario, const std::vector<std::vector<std::int64_t>>& histograms);

// For benchmarks: `clients` clients of `samples` samples each, no histograms.
Population synthetic_population(const Scenario& scenario, std::uint32_t clients, std::uint64_t samples);

}  // namespace drift
