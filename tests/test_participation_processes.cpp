// The participation processes (docs/scenarios.md#participation-processes) against the
// participation spec's micro-vectors, their stationary rates over many steps, and their clocks.
#include "catch_torch.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "engine/compose/loader.hpp"
#include "engine/core/error.hpp"
#include "engine/population/participation_process.hpp"

using namespace drift;

namespace {

// `n` clients of 10 labels; client i holds only label i mod 10 (so its mix is one-hot).
Population labelled_population(std::uint32_t n) {
  Population p;
  p.num_classes = 10;
  for (std::uint32_t i = 0; i < n; ++i) {
    p.num_samples.push_back(10);
    std::vector<std::int64_t> h(10, 0);
    h[i % 10] = 10;
    p.histograms.push_back(h);
    p.group.push_back(kNoGroup);
  }
  return p;
}

AvailabilityConfig process(const std::string& model, double p = 0.3) {
  AvailabilityConfig c;
  c.model = model;
  if (model != "periodic_groups") c.params.set("p", p);  // a schedule takes no p
  return c;
}

// The process of c.model, as a run builds it.
std::unique_ptr<AvailabilityModel> process_model(const AvailabilityConfig& c, const Population& population,
                                                 std::uint64_t seed, std::uint32_t group_tag) {
  return make_availability_model(c, population.size(), seed, group_tag, &population);
}

std::string trace(AvailabilityModel& m, std::uint32_t client, std::uint32_t rounds) {
  std::string out;
  for (std::uint32_t r = 1; r <= rounds; ++r) {
    m.set_round(r);
    out += m.online(client, 0.0) ? '1' : '0';
  }
  return out;
}

double rate(AvailabilityModel& m, std::uint32_t client, std::uint32_t rounds) {
  const auto t = trace(m, client, rounds);
  return static_cast<double>(std::count(t.begin(), t.end(), '1')) / rounds;
}

}  // namespace

TEST_CASE("participation micro-vectors of the spec", "[availability][participation]") {
  // FedAU's p_n with L = 10 and psi = (0.6, 0.3, 0.1, 0, ...) (p_mean L = 1), floor 0.02.
  const std::vector<double> psi = {0.6, 0.3, 0.1, 0, 0, 0, 0, 0, 0, 0};
  CHECK(label_probability({0.5, 0, 0.5, 0, 0, 0, 0, 0, 0, 0}, psi, 0.02) == Approx(0.35).epsilon(1e-12));
  CHECK(label_probability({0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, psi, 0.02) == 0.02);
  CHECK(label_probability(std::vector<double>(10, 0.1), psi, 0.02) == Approx(0.1).epsilon(1e-12));
  // Markov transitions with a = 0.05.
  CHECK(markov_transitions(0.05, 0.1).first == Approx(0.05));
  CHECK(markov_transitions(0.05, 0.1).second == Approx(0.45).epsilon(1e-12));
  CHECK(markov_transitions(0.05, 0.5).second == Approx(0.05).epsilon(1e-12));
  const auto [a, b] = markov_transitions(0.05, 0.02);
  CHECK(a == Approx(0.05 / 2.45).epsilon(1e-12));
  CHECK(b == 1.0);
  CHECK(a / (a + b) == Approx(0.02).epsilon(1e-12));
  // Cyclic with c = 10, p = 0.25 (A = round-half-even(2.5) = 2, B = 8) and r0 = 3.
  std::string cyclic;
  for (std::uint64_t k = 0; k < 16; ++k) cyclic += cyclic_active(10, 0.25, 3, k) ? '1' : '0';
  CHECK(cyclic == "0001100000000110");
  // p = 0 is never active (the floor of one active step holds for p > 0 only); a small p still
  // gets its one step a cycle.
  for (std::uint64_t k = 0; k < 20; ++k) CHECK_FALSE(cyclic_active(2, 0.0, 0, k));
  CHECK(cyclic_active(10, 0.01, 0, 0));
  // FedAWE's p_i^t with P = 20: sine, interleaved sine (cut 0.1), staircase.
  ProcessOptions c;
  c.modulation = Modulation::sine;
  const std::vector<std::pair<std::uint64_t, double>> sine = {{0, 0.35}, {5, 0.5}, {10, 0.35}, {15, 0.2}};
  for (auto [t, want] : sine) {
    CHECK(modulated_probability(c, 0.5, t) == Approx(want).epsilon(1e-12));
    CHECK(modulated_probability(c, 0.2, t) == Approx(want * 0.4).epsilon(1e-12));
  }
  c.modulation = Modulation::interleaved_sine;
  CHECK(modulated_probability(c, 0.2, 10) == Approx(0.14).epsilon(1e-12));
  CHECK(modulated_probability(c, 0.2, 15) == 0.0);
  c.modulation = Modulation::staircase;
  CHECK(modulated_probability(c, 0.5, 9) == 0.5);
  CHECK(modulated_probability(c, 0.5, 10) == Approx(0.2).epsilon(1e-12));
  CHECK(modulated_probability(c, 0.5, 19) == Approx(0.2).epsilon(1e-12));
  CHECK(modulated_probability(c, 0.5, 20) == 0.5);
}

TEST_CASE("participation processes keep their stationary rates and repeat for a seed",
          "[availability][participation]") {
  const auto population = labelled_population(10);
  SECTION("bernoulli") {
    auto m = process_model(process("bernoulli", 0.3), population, 7, kNoGroup);
    const double r = rate(*m, 4, 20000);
    CHECK(std::abs(r - 0.3) < 4 * std::sqrt(0.3 * 0.7 / 20000));
    auto again = process_model(process("bernoulli", 0.3), population, 7, kNoGroup);
    CHECK(trace(*m, 2, 200) == trace(*again, 2, 200));
    auto other = process_model(process("bernoulli", 0.3), population, 8, kNoGroup);
    CHECK(trace(*m, 2, 200) != trace(*other, 2, 200));
    CHECK(m->probability(2, 5) == 0.3);
  }
  SECTION("round_markov: runs longer than Bernoulli's, the same rate") {
    auto m = process_model(process("round_markov", 0.1), population, 7, kNoGroup);
    const auto t = trace(*m, 1, 200000);
    const double r = static_cast<double>(std::count(t.begin(), t.end(), '1')) / t.size();
    CHECK(std::abs(r - 0.1) < 0.01);
    std::size_t switches = 0;
    for (std::size_t k = 1; k < t.size(); ++k) switches += t[k] != t[k - 1];
    // Switches per step at stationarity: p b + (1 - p) a = 0.1 * 0.45 + 0.9 * 0.05 = 0.09.
    CHECK(std::abs(static_cast<double>(switches) / t.size() - 0.09) < 0.01);
  }
  SECTION("cyclic: runs of round(c p) active steps every c") {
    auto c = process("cyclic", 0.25);
    c.params.set("cycle", std::int64_t{10});
    auto m = process_model(c, population, 7, kNoGroup);
    const auto t = trace(*m, 3, 100);
    const auto first = t.find('1');
    REQUIRE(first < 8);
    for (std::size_t k = first; k + 10 <= t.size(); k += 10) CHECK(t.substr(k, 10) == "1100000000");
  }
  SECTION("periodic_groups: exactly one of 5 id ranges at a time, turns of 100") {
    auto m = process_model(process("periodic_groups"), labelled_population(250), 7, kNoGroup);
    for (std::uint32_t r = 1; r <= 600; r += 7) {
      m->set_round(r);
      std::set<std::uint32_t> groups;
      for (std::uint32_t client = 0; client < 250; ++client)
        if (m->online(client, 0.0)) groups.insert(client / 50);
      CHECK(groups.size() == 1);
    }
    const auto g0 = trace(*m, 0, 600);
    const auto off = g0.find('0');  // the offset cuts group 0's first turn short
    REQUIRE(off <= 100);
    CHECK(g0.substr(off, 400) == std::string(400, '0'));
    CHECK(g0.substr(off + 400, 100) == std::string(100, '1'));
    CHECK(trace(*m, 60, 600).substr(off, 100) == std::string(100, '1'));  // group 1 follows
    CHECK_FALSE(m->probability(0, 1).has_value());
  }
}

TEST_CASE("participation probabilities by the papers' rules", "[availability][participation]") {
  const auto population = labelled_population(20);
  ProcessOptions c;
  c.p = 0.3;  // label_dirichlet's mean
  c.probability = ParticipationRule::adversarial;
  c.p_min = 0.1;
  auto p = participation_probabilities(c, population, 1, kNoGroup);
  CHECK(p[0] == Approx(0.1));
  CHECK(p[9] == Approx(1.0));
  CHECK(p[13] == Approx(0.1 + 0.9 * 3 / 9));
  c.probability = ParticipationRule::label_dirichlet;
  c.p_min = 0.02;
  p = participation_probabilities(c, population, 1, kNoGroup);
  for (auto v : p) CHECK((v >= 0.02 && v <= 1.0));
  CHECK(p[3] == p[13]);  // the same labels, the same probability
  CHECK(p == participation_probabilities(c, population, 1, kNoGroup));
  c.probability = ParticipationRule::label_uniform;
  p = participation_probabilities(c, population, 1, kNoGroup);
  for (std::size_t i = 5; i < 10; ++i) CHECK(p[i] < 0.5);  // labels 5-9 draw from [0, 0.5)
  c.probability = ParticipationRule::random;
  c.p_min = 0.2;
  p = participation_probabilities(c, population, 1, kNoGroup);
  for (auto v : p) CHECK((v >= 0.2 && v < 1.0));
  Population unlabelled = population;
  unlabelled.histograms.clear();
  c.probability = ParticipationRule::label_dirichlet;
  CHECK_THROWS_AS(participation_probabilities(c, unlabelled, 1, kNoGroup), UserError);
}

TEST_CASE("a participation process steps with rounds in sync and with time in async", "[availability][participation]") {
  const auto population = labelled_population(10);
  auto c = process("bernoulli", 0.5);
  c.params.set("step", 60.0);
  auto by_round = process_model(c, population, 3, kNoGroup);
  auto by_time = process_model(c, population, 3, kNoGroup);
  for (std::uint32_t r = 1; r <= 50; ++r) {
    by_round->set_round(r);
    const double t = (r - 1) * 60.0 + 30.0;
    CHECK(by_round->online(5, 0.0) == by_time->online(5, t));
    CHECK(by_round->online(5, 1e9) == by_round->online(5, 0.0));  // a round does not change with time
  }
  // Asynchronous: the next change falls on a step boundary.
  const double next = by_time->online(5, 0.0) ? by_time->next_offline(5, 0.0) : by_time->next_online(5, 0.0);
  CHECK(std::fmod(next, 60.0) == 0.0);
  CHECK(by_time->online(5, next) != by_time->online(5, 0.0));
}

TEST_CASE("a process takes only its own keys, and a group its model's", "[availability][participation]") {
  const auto error = [](const std::string& text) {
    try {
      parse_scenario(text, "s.toml");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // Only Bernoulli has a per-step probability to modulate: under cyclic the key does nothing.
  const auto cyclic = parse_scenario("[availability]\nmodel = \"cyclic\"\nmodulation = \"sine\"\n", "s.toml");
  REQUIRE_FALSE(cyclic.warnings.empty());
  CHECK(cyclic.warnings.front() ==
        "availability.modulation does nothing: availability.model = \"cyclic\" does not take it (bernoulli does)");
  CHECK_THAT(error("[availability]\nmodel = \"always\"\nperiods = 3600.0\n"),
             Catch::Contains("did you mean 'availability.period'") &&
                 Catch::Contains("this run's availability models take no parameters"));
  // A group's model brings its keys to [availability], whose values the group keeps.
  const auto s = parse_scenario(
      "[availability]\nmodel = \"always\"\nperiod = 3600.0\n"
      "[groups.night]\nrule = \"id_range\"\nfrom = 0\nto = 4\n[groups.night.availability]\nmodel = \"diurnal\"\n"
      "duty = 0.25\n",
      "s.toml");
  REQUIRE(s.groups.size() == 1);
  CHECK(s.groups[0].availability.params.number("period") == 3600.0);
  CHECK(s.groups[0].availability.params.number("duty") == 0.25);
  CHECK(s.availability.params.number("duty") == 0.5);
  CHECK_THAT(error("[groups.night]\nrule = \"id_range\"\nfrom = 0\nto = 4\n[groups.night.availability]\n"
                   "mean_online = 10.0\n"),
             Catch::Contains("unknown key 'groups.night.availability.mean_online'"));
}
