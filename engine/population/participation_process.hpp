#pragma once
// Participation processes: the availability models of the papers on unknown participation
// (docs/scenarios.md#participation-processes). Each client has a participation probability p_i,
// drawn by one of the papers' rules (some tied to the client's labels), and is active or not
// in each step: a sync round, or `availability.step` virtual seconds under FedAsync and FedBuff.
// Each process is a row of the availability catalogue with the keys it takes.
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

// The keys of the participation processes (a process binds the ones it takes; the initialisers
// are their defaults). A state per step: a sync round, or `step` virtual seconds under FedAsync
// and FedBuff.
struct ProcessOptions {
  ParticipationRule probability = ParticipationRule::fixed;  // how each client's p_i is drawn
  double p = 0.1;                                            // fixed: every p_i; label_dirichlet: their mean
  double p_min = 0.02;                                       // label_dirichlet, random, adversarial: the floor
  double p_alpha = 0.1;                                      // label_dirichlet: the Dirichlet concentration
  double markov_a = 0.05;                                    // round_markov: P(inactive -> active)
  std::int64_t cycle = 100;                                  // cyclic: steps per cycle
  Modulation modulation = Modulation::none;                  // bernoulli: p_i over the steps
  double amplitude = 0.3;                                    // sine, interleaved_sine: gamma
  std::int64_t modulation_period = 20;                       // sine, interleaved_sine, staircase: steps
  double cut = 0.1;                                          // interleaved_sine: p below it becomes 0
  std::int64_t period_groups = 5;                            // periodic_groups: groups taking turns
  std::int64_t group_steps = 100;                            // periodic_groups: steps of each turn
  double step = 60.0;                                        // async modes: virtual seconds per step
};

enum class ProcessKind { bernoulli, round_markov, cyclic, periodic_groups };

// The processes' rows of the availability catalogue (availability.cpp lists them after its own).
std::vector<AvailabilityModelInfo> participation_process_rows();

// Each client's nominal p_i under `options.probability`, for the whole population. Throws
// UserError for a label rule without label histograms.
std::vector<double> participation_probabilities(const ProcessOptions& options, const Population& population,
                                                std::uint64_t seed, std::uint32_t group_tag);

// FedAU's and FedAWE's p_i from the client's label mix d (summing to 1) and per-label weights w:
// max(floor, <d, w>), clamped to [0, 1].
double label_probability(const std::vector<double>& mix, const std::vector<double>& weights, double floor);

// p_i^t: the nominal p modulated at step t (sine, interleaved sine, staircase), in [0, 1].
double modulated_probability(const ProcessOptions& options, double p, std::uint64_t step);

// The two-state chain's (to-active, to-inactive) probabilities with stationary activity p:
// (a, a (1/p - 1)), scaled down to (a / b, 1) when b > 1, as FedAU's code does.
std::pair<double, double> markov_transitions(double a, double p);

// Whether a client with cycle length c and probability p is active at `step` when its first
// active run starts at step r0: A = max(1, round-half-even(c p)) active then B = max(1, c - A)
// inactive steps.
bool cyclic_active(std::int64_t cycle, double p, std::uint64_t r0, std::uint64_t step);

std::unique_ptr<AvailabilityModel> make_participation_process(ProcessKind kind, const ProcessOptions& options,
                                                              const Population& population, std::uint64_t seed,
                                                              std::uint32_t group_tag);

}  // namespace drift
