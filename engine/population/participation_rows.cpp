// The participation processes' rows of the availability catalogue: each binds the keys of
// [availability] it takes into ProcessOptions (docs/scenarios.md#participation-processes).
#include <string>
#include <utility>
#include <vector>

#include "engine/config/time_bounds.hpp"
#include "engine/population/participation_process.hpp"

namespace drift {
namespace {

using O = ProcessOptions;

// How each client's p_i is drawn: every process but the rotation of periodic_groups has one.
std::vector<KeyBinding<O>> probability_keys() {
  return {bind_key<O>("probability", "how each client's p_i is drawn", &O::probability),
          bind_key<O>("p", "fixed: every client's p_i; label_dirichlet: their mean", &O::p).range(0.0, 1.0),
          bind_key<O>("p_min", "label_dirichlet, random, adversarial: the lowest p_i", &O::p_min).range(0.0, 1.0),
          bind_key<O>("p_alpha", "label_dirichlet: concentration of the Dirichlet draw over labels", &O::p_alpha)
              .range(0.0, 1e6, true)};
}

bool label_rule(ParticipationRule rule) {
  return rule == ParticipationRule::label_dirichlet || rule == ParticipationRule::label_uniform ||
         rule == ParticipationRule::adversarial;
}

AvailabilityModelInfo process_row(ProcessKind kind, std::string name, std::string description,
                                  std::vector<KeyBinding<O>> own) {
  const bool has_probability = kind != ProcessKind::periodic_groups;
  std::vector<KeyBinding<O>> keys;
  if (has_probability) keys = probability_keys();
  for (auto& k : own) keys.push_back(std::move(k));
  keys.push_back(bind_key<O>("step", "under fedasync and fedbuff: virtual seconds per step", &O::step)
                     .range(0.0, kMaxVirtualSeconds, true));
  const ParamTable<O> params(std::move(keys));
  auto row = availability_info(std::move(name), std::move(description), params,
                               [kind](const O& o, std::uint32_t clients, std::uint64_t seed, std::uint32_t group_tag,
                                      const Population* population) -> std::unique_ptr<AvailabilityModel> {
                                 if (population != nullptr)
                                   return make_participation_process(kind, o, *population, seed, group_tag);
                                 const auto bare =
                                     synthetic_population({}, clients, 0);  // only the count is known (trace tools)
                                 return make_participation_process(kind, o, bare, seed, group_tag);
                               });
  if (!has_probability) return row;  // a schedule: no per-client probability, nothing tied to labels
  row.probabilities = params.reading(participation_probabilities);
  row.label_dependence = params.reading([](const O& o) -> std::string {
    return label_rule(o.probability) ? "availability.probability = \"" + name_of(o.probability) +
                                           "\" ties participation to each client's labels"
                                     : "";
  });
  return row;
}

}  // namespace

std::vector<AvailabilityModelInfo> participation_process_rows() {
  return {
      process_row(ProcessKind::bernoulli, "bernoulli",
                  "participation process: each step, each client takes part with probability p_i",
                  {bind_key<O>("modulation", "how p_i changes over the steps", &O::modulation),
                   bind_key<O>("amplitude", "sine, interleaved_sine: the wave's amplitude gamma", &O::amplitude)
                       .range(0.0, 1.0),
                   bind_key<O>("modulation_period", "sine, interleaved_sine, staircase: steps per period",
                               &O::modulation_period)
                       .range(1.0, 1e9),
                   bind_key<O>("cut", "interleaved_sine: a probability below it becomes 0", &O::cut).range(0.0, 1.0)}),
      process_row(ProcessKind::round_markov, "round_markov",
                  "participation process: a two-state chain per client, active a fraction p_i of steps",
                  {bind_key<O>("markov_a", "probability of turning active", &O::markov_a).range(0.0, 1.0, true)}),
      process_row(
          ProcessKind::cyclic, "cyclic",
          "participation process: runs of round(cycle p_i) active steps, then the rest inactive",
          {bind_key<O>("cycle", "steps per cycle (round(cycle p_i) of them active)", &O::cycle).range(1.0, 1e9)}),
      process_row(ProcessKind::periodic_groups, "periodic_groups",
                  "participation process: period_groups id ranges take turns of group_steps",
                  {bind_key<O>("period_groups", "groups of clients taking turns", &O::period_groups).range(1.0, 1e6),
                   bind_key<O>("group_steps", "steps of each group's turn", &O::group_steps).range(1.0, 1e9)}),
  };
}

}  // namespace drift
