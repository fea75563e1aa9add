#pragma once
// The closed choices of a scenario as enums. The loader turns each validated string into its
// enum once, so the drivers compare integers, not strings. The names table beside each enum is
// the only place a choice is spelt: the schema lists it, the resolved scenario and the log
// print it.
#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace drift {

enum class SimulationMode { sync, fedasync, fedbuff };
enum class LateUpdates { discard, stale };  // sync: what becomes of an update after the deadline
enum class StalenessKind { constant, polynomial, hinge };
enum class ClientStateStore { memory, disk };  // where idle clients' private state waits
enum class TimelineAction { offline, online, speed, sampler, fraction, deadline, leave, join, move };
enum class DivergencePolicy { stop, keep_going };  // what a diverged run does next
// How a group's clients are chosen: by their most frequent label, by holding only the given
// labels, by an id range, or by a seeded share of the clients.
enum class GroupRule { dominant_label, label_set, id_range, proportion };
// How a trace's client column maps to clients: the id itself, or a seeded draw of the trace's
// clients (docs/traces.md).
enum class TraceMapping { ids, seeded };
// [data.augment] presets: nothing, or a random crop with padding 4 and a flip drawn per sample
// (cifar) or once per batch (cifar-batch, as FedSKC's and FedSC's code).
enum class AugmentPreset { none, cifar, cifar_batch };
enum class AugmentScope { sample, batch };  // who draws a crop and a flip: each image, or the batch
// The cyclic sampler's strata: the scenario's groups if any are defined (`auto`), the groups,
// or the clients' dominant labels.
enum class CyclicStrata { automatic, groups, labels };
// Which of the run's own devices get an evaluation lane, a slot that only evaluates, so a
// round's evaluation overlaps the next round's training: each GPU, every device, or none.
enum class EvalLanes { gpus, all, none };

// How a participation process draws each client's probability p_i (docs/scenarios.md#participation-processes):
// one value for all, FedAU's and FedAWE's rules tied to the client's labels, MIFA's random and
// adversarial ones.
enum class ParticipationRule { fixed, label_dirichlet, label_uniform, random, adversarial };
// How the local learning rate changes over rounds: lr * lr_decay^(r-1), lr / r (MIFA's code),
// or lr / sqrt((r-1)/10 + 1) (FedAWE's code).
enum class LrSchedule { exponential, inverse, inverse_sqrt };
// Under training.local_steps: each job starts a new shuffled pass (fresh), or a client's pass
// runs on from where its last job left it (persistent: FedAU's loader, docs/scenarios.md#local-steps).
enum class StepsPass { fresh, persistent };
// How a Bernoulli process's p_i changes over steps (FedAWE's non-stationary dynamics).
enum class Modulation { none, sine, interleaved_sine, staircase };
// [hierarchy] (docs/hierarchy.md): how clients map to edges, and when an edge is online.
enum class EdgeAssignment { uniform, label, group, file };
enum class EdgeAvailability { always, diurnal, model };
// How the cloud takes the edges' models: sync cloud rounds, or FedBuff's buffer of K.
enum class EdgeCloud { sync, fedbuff };

// [privacy]: no DP, noise on the clipped sum at the server, noise added by each client, or
// each client's share of the noise hidden by secure aggregation (distributed).
enum class PrivacyMode { none, central, local, distributed };
// What the noisy sum of clipped updates is divided by: the expected cohort (sound under
// add/remove neighbours) or the number actually summed (docs/privacy.md#the-denominator).
enum class DpDenominator { expected, actual };
// The clip C: fixed, or moved each aggregation toward a quantile of the update norms.
enum class DpClip { fixed, adaptive };
// Secure aggregation (docs/privacy.md#secure-aggregation): the protocol, how inputs become
// integers, and how they are rounded.
enum class SecAggProtocol { none, secagg, secagg_plus };
enum class SecAggEncoding { flower, flsim, signed_mod };
enum class SecAggRounding { stochastic, deterministic };
// model.init of a TorchScript model: its initial weights from the file, or drawn from the seed.
enum class ModelInit { file, seed };

template <typename Choice>
struct ChoiceNames;  // names[i] spells the enumerator whose value is i

template <>
struct ChoiceNames<PrivacyMode> {
  static constexpr std::array<std::string_view, 4> names{"none", "central", "local", "distributed"};
};
template <>
struct ChoiceNames<DpClip> {
  static constexpr std::array<std::string_view, 2> names{"fixed", "adaptive"};
};
template <>
struct ChoiceNames<DpDenominator> {
  static constexpr std::array<std::string_view, 2> names{"expected", "actual"};
};
template <>
struct ChoiceNames<SecAggProtocol> {
  static constexpr std::array<std::string_view, 3> names{"none", "secagg", "secagg_plus"};
};
template <>
struct ChoiceNames<SecAggEncoding> {
  static constexpr std::array<std::string_view, 3> names{"flower", "flsim", "signed_mod"};
};
template <>
struct ChoiceNames<SecAggRounding> {
  static constexpr std::array<std::string_view, 2> names{"stochastic", "deterministic"};
};
template <>
struct ChoiceNames<ModelInit> {
  static constexpr std::array<std::string_view, 2> names{"file", "seed"};
};

template <>
struct ChoiceNames<ParticipationRule> {
  static constexpr std::array<std::string_view, 5> names{"fixed", "label_dirichlet", "label_uniform", "random",
                                                         "adversarial"};
};
template <>
struct ChoiceNames<StepsPass> {
  static constexpr std::array<std::string_view, 2> names{"fresh", "persistent"};
};
template <>
struct ChoiceNames<LrSchedule> {
  static constexpr std::array<std::string_view, 3> names{"exponential", "inverse", "inverse_sqrt"};
};
template <>
struct ChoiceNames<EdgeAssignment> {
  static constexpr std::array<std::string_view, 4> names{"uniform", "label", "group", "file"};
};
template <>
struct ChoiceNames<EdgeAvailability> {
  static constexpr std::array<std::string_view, 3> names{"always", "diurnal", "model"};
};
template <>
struct ChoiceNames<EdgeCloud> {
  static constexpr std::array<std::string_view, 2> names{"sync", "fedbuff"};
};
template <>
struct ChoiceNames<Modulation> {
  static constexpr std::array<std::string_view, 4> names{"none", "sine", "interleaved_sine", "staircase"};
};
template <>
struct ChoiceNames<SimulationMode> {
  static constexpr std::array<std::string_view, 3> names{"sync", "fedasync", "fedbuff"};
};
template <>
struct ChoiceNames<LateUpdates> {
  static constexpr std::array<std::string_view, 2> names{"discard", "stale"};
};
template <>
struct ChoiceNames<StalenessKind> {
  static constexpr std::array<std::string_view, 3> names{"constant", "polynomial", "hinge"};
};
template <>
struct ChoiceNames<ClientStateStore> {
  static constexpr std::array<std::string_view, 2> names{"memory", "disk"};
};
template <>
struct ChoiceNames<TimelineAction> {
  static constexpr std::array<std::string_view, 9> names{"offline",  "online", "speed", "sampler", "fraction",
                                                         "deadline", "leave",  "join",  "move"};
};

template <>
struct ChoiceNames<DivergencePolicy> {
  static constexpr std::array<std::string_view, 2> names{"stop", "continue"};
};

template <>
struct ChoiceNames<GroupRule> {
  static constexpr std::array<std::string_view, 4> names{"dominant_label", "label_set", "id_range", "proportion"};
};
template <>
struct ChoiceNames<CyclicStrata> {
  static constexpr std::array<std::string_view, 3> names{"auto", "groups", "labels"};
};
template <>
struct ChoiceNames<EvalLanes> {
  static constexpr std::array<std::string_view, 3> names{"gpus", "all", "none"};
};

template <>
struct ChoiceNames<TraceMapping> {
  static constexpr std::array<std::string_view, 2> names{"ids", "seeded"};
};
template <>
struct ChoiceNames<AugmentPreset> {
  static constexpr std::array<std::string_view, 3> names{"none", "cifar", "cifar-batch"};
};
template <>
struct ChoiceNames<AugmentScope> {
  static constexpr std::array<std::string_view, 2> names{"sample", "batch"};
};

template <typename Choice>
std::string name_of(Choice choice) {
  return std::string(ChoiceNames<Choice>::names.at(static_cast<std::size_t>(choice)));
}

template <typename Choice>
std::vector<std::string> choice_names() {
  const auto& names = ChoiceNames<Choice>::names;
  return {names.begin(), names.end()};
}

// The enumerator spelt `name`. Validation has already refused any other name, so a miss here
// is a programming error, not a user's.
template <typename Choice>
Choice choice_from(std::string_view name) {
  const auto& names = ChoiceNames<Choice>::names;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<Choice>(i);
  throw std::invalid_argument("not a valid choice: '" + std::string(name) + "'");
}

}  // namespace drift
