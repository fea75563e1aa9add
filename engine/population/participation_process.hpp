#pragma once
// Participation processes: the availability models of the papers on unknown participation
// (docs/scenarios.md#participation-processes). Each client has a participation probability p_i,
// drawn by one of the papers' rules (some tied to the client's labels), and is active or not
// in each step: a sync round, or `availability.step` virtual seconds under FedAsync and FedBuff.
// Every draw comes from the ("participation", ...) streams of the scenario seed, keyed by client
// and step, so every algorithm of a study sees the same participation for a seed, and a resumed
// run sees what the first process saw.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/population/availability.hpp"
#include "engine/population/population.hpp"

namespace drift {

// The participation processes by name, with what `drift list` says of each: the one place
// they are spelt (the availability catalogue takes its rows from here).
struct ParticipationProcessInfo {
  std::string name;
  std::string description;
};
const std::vector<ParticipationProcessInfo>& participation_process_catalog();
bool is_participation_process(const std::string& name);

// Each client's nominal p_i under `config.probability`, for the whole population. Throws
// UserError for a label rule without label histograms.
std::vector<double> participation_probabilities(const AvailabilityConfig& config, const Population& population,
                                                std::uint64_t seed, std::uint32_t group_tag);

// FedAU's and FedAWE's p_i from the client's label mix d (summing to 1) and per-label weights w:
// max(floor, <d, w>), clamped to [0, 1].
double label_probability(const std::vector<double>& mix, const std::vector<double>& weights, double floor);

// p_i^t: the nominal p modulated at step t (sine, interleaved sine, staircase), in [0, 1].
double modulated_probability(const AvailabilityConfig& config, double p, std::uint64_t step);

// The two-state chain's (to-active, to-inactive) probabilities with stationary activity p:
// (a, a (1/p - 1)), scaled down to (a / b, 1) when b > 1, as FedAU's code does.
std::pair<double, double> markov_transitions(double a, double p);

// Whether a client with cycle length c and probability p is active at `step` when its first
// active run starts at step r0: A = max(1, round-half-even(c p)) active then B = max(1, c - A)
// inactive steps.
bool cyclic_active(std::int64_t cycle, double p, std::uint64_t r0, std::uint64_t step);

std::unique_ptr<AvailabilityModel> make_participation_process(const AvailabilityConfig& config,
                                                              const Population& population, std::uint64_t seed,
                                                              std::uint32_t group_tag);

}  // namespace drift
