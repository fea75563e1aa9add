#include "engine/population/participation_process.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"

namespace drift {
namespace {

constexpr double kPi = 3.14159265358979323846;
// How far the async clock looks ahead for a change of state before it answers "never".
constexpr std::uint64_t kHorizonSteps = 1000000;

std::vector<double> label_mix(const Population& population, std::uint32_t client) {
  const auto& h = population.histograms.at(client);
  double total = 0.0;
  for (auto n : h) total += static_cast<double>(n);
  std::vector<double> d(h.size(), 0.0);
  if (total > 0.0)
    for (std::size_t l = 0; l < h.size(); ++l) d[l] = static_cast<double>(h[l]) / total;
  return d;
}

// Per label: FedAU's psi ~ Dirichlet(alpha), scaled by p_mean * L; or FedAWE's phi, uniform on
// [0, 1) for the first half of the labels and on [0, 0.5) for the rest.
std::vector<double> label_weights(const ProcessOptions& c, std::size_t labels, std::uint64_t seed,
                                  std::uint32_t group_tag) {
  if (c.probability == ParticipationRule::label_dirichlet) {
    auto rng = make_stream(seed, "participation.psi", {group_tag});
    auto psi = dirichlet_draw(rng, c.p_alpha, labels);
    for (auto& v : psi) v *= c.p * static_cast<double>(labels);
    return psi;
  }
  auto rng = make_stream(seed, "participation.phi", {group_tag});
  std::vector<double> phi(labels);
  for (std::size_t l = 0; l < labels; ++l) phi[l] = rng.uniform() * (l < labels / 2 ? 1.0 : 0.5);
  return phi;
}

std::int64_t most_frequent_label(const std::vector<std::int64_t>& h) {
  return static_cast<std::int64_t>(std::max_element(h.begin(), h.end()) - h.begin());
}

}  // namespace

double label_probability(const std::vector<double>& mix, const std::vector<double>& weights, double floor) {
  double dot = 0.0;
  for (std::size_t i = 0; i < std::min(mix.size(), weights.size()); ++i) dot += mix[i] * weights[i];
  return std::clamp(std::max(floor, dot), 0.0, 1.0);
}

std::vector<double> participation_probabilities(const ProcessOptions& c, const Population& population,
                                                std::uint64_t seed, std::uint32_t group_tag) {
  const auto n = population.size();
  const bool by_labels = c.probability == ParticipationRule::label_dirichlet ||
                         c.probability == ParticipationRule::label_uniform ||
                         c.probability == ParticipationRule::adversarial;
  if (by_labels && population.histograms.size() != n)
    throw UserError("availability.probability = \"" + std::string(name_of(c.probability)) +
                    "\" ties each client's probability to its labels, and this population has no label counts");
  std::vector<double> p(n, c.p);
  if (c.probability == ParticipationRule::label_dirichlet || c.probability == ParticipationRule::label_uniform) {
    const auto w = label_weights(c, static_cast<std::size_t>(population.num_classes), seed, group_tag);
    const double floor = c.probability == ParticipationRule::label_dirichlet ? c.p_min : 0.0;
    for (std::uint32_t i = 0; i < n; ++i) p[i] = label_probability(label_mix(population, i), w, floor);
  } else if (c.probability == ParticipationRule::random) {
    for (std::uint32_t i = 0; i < n; ++i)
      p[i] = c.p_min + (1.0 - c.p_min) * make_stream(seed, "participation.random", {group_tag, i}).uniform();
  } else if (c.probability == ParticipationRule::adversarial) {
    const double top = std::max<double>(1.0, static_cast<double>(population.num_classes - 1));
    for (std::uint32_t i = 0; i < n; ++i)
      p[i] = c.p_min + (1.0 - c.p_min) * static_cast<double>(most_frequent_label(population.histograms[i])) / top;
  }
  return p;
}

double modulated_probability(const ProcessOptions& c, double p, std::uint64_t step) {
  const double t = static_cast<double>(step), period = static_cast<double>(c.modulation_period);
  double v = p;
  switch (c.modulation) {
    case Modulation::none:
      break;
    case Modulation::sine:
      v = p * (c.amplitude * std::sin(2.0 * kPi * t / period) + 1.0 - c.amplitude);
      break;
    case Modulation::interleaved_sine:
      v = p * (c.amplitude * std::sin(2.0 * kPi * t / period) + 1.0 - c.amplitude);
      if (v < c.cut) v = 0.0;
      break;
    case Modulation::staircase:  // FedAWE's: high for half a period, then 0.4 of it
      if ((step / static_cast<std::uint64_t>(std::max<std::int64_t>(1, c.modulation_period / 2))) % 2 == 1) v = 0.4 * p;
      break;
  }
  return std::clamp(v, 0.0, 1.0);
}

std::pair<double, double> markov_transitions(double a, double p) {
  if (p <= 0.0) return {0.0, 1.0};
  double b = a * (1.0 / p - 1.0);
  if (b > 1.0) {
    a /= b;
    b = 1.0;
  }
  return {a, b};
}

bool cyclic_active(std::int64_t cycle, double p, std::uint64_t r0, std::uint64_t step) {
  // p_i = 0 means never, as under the other processes: the floor of one active step would have
  // made such a client take part once a cycle, and known-probability divide by its 0.
  if (!(p > 0.0)) return false;
  const auto active =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(std::nearbyint(static_cast<double>(cycle) * p)));
  const auto inactive = std::max<std::int64_t>(1, cycle - active);
  if (step < r0) return false;
  return static_cast<std::int64_t>((step - r0) % static_cast<std::uint64_t>(active + inactive)) < active;
}

namespace {

// The client's state in each step; which step a query's time falls in is the clock's business:
// the round the sync driver set, or floor(t / step) under FedAsync and FedBuff.
class ParticipationProcess final : public AvailabilityModel {
 public:
  ParticipationProcess(ProcessKind kind, const ProcessOptions& c, const Population& population, std::uint64_t seed,
                       std::uint32_t group_tag)
      : c_(c),
        kind_(kind),
        p_(participation_probabilities(c, population, seed, group_tag)),
        seed_(seed),
        group_(group_tag),
        transitions_(p_.size()) {
    for (std::size_t i = 0; i < p_.size(); ++i) transitions_[i] = markov_transitions(c.markov_a, p_[i]);
    // One offset for the whole rotation: group 0's first run is cut short by it.
    offset_ = make_stream(seed, "participation.offset", {group_tag}).below(static_cast<std::uint64_t>(c.group_steps));
  }

  void set_round(std::uint32_t round) override { round_ = round; }

  std::optional<double> probability(std::uint32_t client, std::uint32_t round) const override {
    if (kind_ == ProcessKind::periodic_groups) return std::nullopt;  // no per-client probability: a schedule
    const auto step = round > 0 ? round - 1 : 0;
    return kind_ == ProcessKind::bernoulli ? modulated_probability(c_, p_.at(client), step) : p_.at(client);
  }

  bool online(std::uint32_t client, double t) override { return active(client, step_at(t)); }

  double next_offline(std::uint32_t client, double t) override {
    if (round_) return active(client, *round_ - 1) ? kNever : t;
    return next_change(client, t, false);
  }

  double next_online(std::uint32_t client, double t) override {
    // Under the round clock, a client that is away may be back next round, at a time not known yet.
    if (round_) return active(client, *round_ - 1) ? t : (can_return(client) ? std::nextafter(t, kNever) : kNever);
    return next_change(client, t, true);
  }

 private:
  std::uint64_t step_at(double t) const {
    if (round_) return *round_ - 1;
    return static_cast<std::uint64_t>(std::max(0.0, std::floor(t / c_.step)));
  }

  // The first time >= t at which the client's state is `wanted` (t itself if it is now).
  double next_change(std::uint32_t client, double t, bool wanted) {
    const auto from = step_at(t);
    if (active(client, from) == wanted) return t;
    if (wanted && !can_return(client)) return kNever;
    for (std::uint64_t k = from + 1; k < from + kHorizonSteps; ++k)
      if (active(client, k) == wanted) return static_cast<double>(k) * c_.step;
    return kNever;
  }

  bool can_return(std::uint32_t client) const {
    if (kind_ == ProcessKind::periodic_groups) return true;
    return p_.at(client) > 0.0 && (kind_ != ProcessKind::round_markov || transitions_[client].first > 0.0);
  }

  double draw(std::uint32_t client, std::uint64_t step, const char* purpose = "participation") const {
    return make_stream(seed_, purpose, {group_, client, step}).uniform();
  }

  bool active(std::uint32_t client, std::uint64_t step) {
    if (kind_ == ProcessKind::bernoulli) return draw(client, step) < modulated_probability(c_, p_.at(client), step);
    if (kind_ == ProcessKind::cyclic) return cyclic_active(c_.cycle, p_.at(client), cycle_start(client), step);
    if (kind_ == ProcessKind::periodic_groups) return rotation_active(client, step);
    return markov_active(client, step);
  }

  std::uint64_t cycle_start(std::uint32_t client) const {
    const auto a = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::nearbyint(c_.cycle * p_.at(client))));
    const auto b = static_cast<std::uint64_t>(std::max<std::int64_t>(1, c_.cycle - a));
    return make_stream(seed_, "participation.phase", {group_, client}).below(b);
  }

  // G equal id ranges take turns of `group_steps`; exactly one is active at a time.
  bool rotation_active(std::uint32_t client, std::uint64_t step) const {
    const auto groups = static_cast<std::uint64_t>(c_.period_groups);
    const auto n = static_cast<double>(p_.size());
    std::uint64_t g = 0;
    while (g + 1 < groups && client >= static_cast<std::uint32_t>(std::nearbyint(static_cast<double>(g + 1) * n /
                                                                                 static_cast<double>(groups))))
      ++g;
    const auto turn = static_cast<std::uint64_t>(c_.group_steps);
    return ((step + offset_) / turn) % groups == g;
  }

  // Every step, round 0 included, first moves the chain and then reports its state.
  bool markov_active(std::uint32_t client, std::uint64_t step) {
    auto& states = chains_[client];
    if (states.empty()) states.push_back(draw(client, 0, "participation.start") < p_[client]);
    while (states.size() <= step + 1) {
      const bool now = states.back() != 0;
      const auto [to_active, to_inactive] = transitions_[client];
      const double u = draw(client, states.size() - 1);
      states.push_back(now ? u >= to_inactive : u < to_active);
    }
    return states[step + 1] != 0;
  }

  ProcessOptions c_;
  ProcessKind kind_;
  std::vector<double> p_;
  std::uint64_t seed_;
  std::uint32_t group_;
  std::vector<std::pair<double, double>> transitions_;
  std::uint64_t offset_ = 0;
  std::optional<std::uint32_t> round_;                                   // set by the sync driver: the round clock
  std::unordered_map<std::uint32_t, std::vector<std::uint8_t>> chains_;  // states[0] = before step 0
};

}  // namespace

std::unique_ptr<AvailabilityModel> make_participation_process(ProcessKind kind, const ProcessOptions& options,
                                                              const Population& population, std::uint64_t seed,
                                                              std::uint32_t group_tag) {
  return std::make_unique<ParticipationProcess>(kind, options, population, seed, group_tag);
}

}  // namespace drift
