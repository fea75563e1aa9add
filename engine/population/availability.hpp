#pragma once
// When clients are online. Each group (and the clients in no group) has its own model;
// timeline entries force a group online or offline from a virtual time on.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/config/catalog.hpp"
#include "engine/config/param_table.hpp"
#include "engine/config/scenario.hpp"
#include "engine/population/population.hpp"

namespace drift {

inline constexpr double kNever = std::numeric_limits<double>::infinity();

class AvailabilityModel {
 public:
  virtual ~AvailabilityModel() = default;
  virtual bool online(std::uint32_t client, double t) = 0;
  // The first time >= t at which the client is offline (t itself if offline now), or kNever.
  virtual double next_offline(std::uint32_t client, double t) = 0;
  // The first time >= t at which the client is online (t itself if online now), or kNever.
  virtual double next_online(std::uint32_t client, double t) = 0;
  // Sync rounds: the round now starting. Participation processes step with it; time-based
  // models ignore it.
  virtual void set_round(std::uint32_t round) {}
  // p_i in `round`, where the model defines one (participation processes); for the
  // known-probability oracle and population.csv.
  virtual std::optional<double> probability(std::uint32_t client, std::uint32_t round) const { return std::nullopt; }
};

// One row of the availability catalogue (docs/development.md#adding-an-availability-model): a
// model's name, what it does, its own keys of [availability] (and of a group's override), how it
// is made from them, how long one of its on/off cycles lasts (0: no cycle), and what the privacy
// accountant and population.csv must know of it. Nothing compares a model's name.
struct AvailabilityModelInfo {
  // `population` is null where only the client count is known (trace tools, fuzzers).
  using Factory = std::function<std::unique_ptr<AvailabilityModel>(const ParamSet& params, std::uint32_t clients,
                                                                   std::uint64_t seed, std::uint32_t group_tag,
                                                                   const Population* population)>;
  std::string name;
  std::string description;
  std::vector<ParamSpec> params;
  Factory make;
  std::function<double(const ParamSet&)> cycle_seconds;  // unset: no cycle
  // Participation processes: each client's nominal p_i (population.csv); unset elsewhere.
  std::function<std::vector<double>(const ParamSet&, const Population&, std::uint64_t seed, std::uint32_t group_tag)>
      probabilities;
  // Why who is online depends on the clients' labels ("availability.probability ties ..."), or
  // "" when it does not; unset counts as "". The privacy accountant reads it.
  std::function<std::string(const ParamSet&)> label_dependence;
};

// A model with keys: `params` binds them to the members of Options, and `make` receives them
// read, as make(const Options&, clients, seed, group_tag, population).
template <class Options, class Make>
AvailabilityModelInfo availability_info(std::string name, std::string description, const ParamTable<Options>& params,
                                        Make make) {
  AvailabilityModelInfo info;
  info.name = std::move(name);
  info.description = std::move(description);
  info.params = params.specs();
  info.make = params.reading(std::move(make));
  return info;
}

const Rows<AvailabilityModelInfo>& availability_catalog();
std::vector<std::string> availability_model_names();
const AvailabilityModelInfo& availability_model(const std::string& name);  // throws UserError
// A plugin's model, after the built-in ones (docs/plugins.md); a taken name throws UserError.
void register_availability_model(AvailabilityModelInfo info);

// Builds one model from its config. Trace files are parsed and checked here (sorted,
// non-overlapping, non-negative intervals), with errors naming the file and line.
std::unique_ptr<AvailabilityModel> make_availability_model(const AvailabilityConfig& config, std::uint32_t clients,
                                                           std::uint64_t seed, std::uint32_t group_tag,
                                                           const Population* population = nullptr);

class ClientAvailability {
 public:
  ClientAvailability(const Scenario& scenario, const Population& population);

  bool online(std::uint32_t client, double t);
  // First time in [from, until) at which the client is offline, or kNever.
  double offline_between(std::uint32_t client, double from, double until);
  // First time >= from at which the client is online, or kNever.
  double next_online(std::uint32_t client, double from);
  // From `t` on, the group is forced online (true), offline (false) or back to its model.
  void force(std::uint32_t group, double t, std::optional<bool> state);
  // Sync runs: the round now starting (participation processes change state with it).
  void set_round(std::uint32_t round);
  // The client's p_i in `round` under its model, where it defines one; the timeline's forcing
  // is not in it.
  std::optional<double> probability(std::uint32_t client, std::uint32_t round);

 private:
  AvailabilityModel& model_of(std::uint32_t client);
  std::optional<bool> forced_state(std::uint32_t group, double t) const;

  const Population& population_;
  bool round_clock_ = false;                                // sync: participation processes step with the rounds
  std::vector<std::unique_ptr<AvailabilityModel>> models_;  // per group, last = no group
  struct Change {
    double time;
    std::optional<bool> state;
  };
  std::vector<std::vector<Change>> forced_;  // per group, by time
};

}  // namespace drift
