// DP-FedAvg's clipping, noise and denominators against hand-computed values, the run's privacy
// ledger, and the Poisson sampler (docs/privacy.md).
#include "catch_torch.hpp"

#include <cmath>

#include "engine/compose/loader.hpp"
#include "engine/privacy/adaptive_clip.hpp"
#include "engine/privacy/philox.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/sampling/samplers.hpp"
#include "engine/sim/privacy_book.hpp"
#include "engine/sim/private_aggregation.hpp"

using namespace drift;

namespace {

NamedTensors model(std::vector<double> w, std::int64_t counter = 7) {
  return {{"w", torch::tensor(w, torch::kFloat64)}, {"n", torch::tensor({counter}, torch::kLong)}};
}

ClientUpdate update(std::uint32_t client, std::vector<double> w) {
  ClientUpdate u;
  u.client_id = client;
  u.num_samples = 10 * (client + 1);
  u.weights = model(std::move(w), 99);
  return u;
}

std::vector<double> values(const NamedTensors& t) { return flat_floats(t); }

PrivacyConfig central(double clip, double z, DpDenominator d = DpDenominator::expected) {
  PrivacyConfig c;
  c.mode = PrivacyMode::central;
  c.clip = clip;
  c.noise_multiplier = z;
  c.denominator = d;
  return c;
}

}  // namespace

TEST_CASE("DP: clipping to C and the expected or actual denominator, without noise", "[privacy]") {
  const auto global = model({1.0, 2.0});
  // Changes (3, 4): norm 5, scaled to (0.6, 0.8); (0.3, 0.4): norm 0.5, kept.
  std::vector<ClientUpdate> updates{update(0, {4.0, 6.0}), update(1, {1.3, 2.4})};
  const auto config = central(1.0, 0.0);
  DpMechanism expected(config, 42, 4.0);
  expected.privatise(global, updates, 1);
  const auto mean = values(updates[0].weights);
  CHECK(mean[0] == Approx(1.0 + 0.9 / 4).epsilon(1e-15));
  CHECK(mean[1] == Approx(2.0 + 1.2 / 4).epsilon(1e-15));
  CHECK(updates[1].weights[0].value.equal(updates[0].weights[0].value));
  CHECK(updates[0].weights[1].value.item<std::int64_t>() == 7);  // integer tensors: the global model's
  CHECK(expected.take_stats().clipped == 1);
  CHECK(expected.noise_std_on_mean(2, 4.0) == 0.0);

  std::vector<ClientUpdate> again{update(0, {4.0, 6.0}), update(1, {1.3, 2.4})};
  const auto actual_config = central(1.0, 0.0, DpDenominator::actual);
  DpMechanism actual(actual_config, 42, 4.0);
  actual.privatise(global, again, 1);
  const auto got = values(again[0].weights);
  CHECK(got[0] == Approx(1.45).epsilon(1e-15));
  CHECK(got[1] == Approx(2.6).epsilon(1e-15));
  CHECK(actual.denominator(2) == 2.0);
  CHECK(actual.denominator(0) == 1.0);
}

TEST_CASE("DP: an update with a non-finite entry counts as no change", "[privacy]") {
  const auto global = model({1.0, 2.0});
  std::vector<ClientUpdate> updates{update(0, {std::nan(""), 2.0}), update(1, {1.5, 2.0})};
  const auto config = central(10.0, 0.0);
  DpMechanism dp(config, 1, 2.0);
  dp.privatise(global, updates, 1);
  const auto got = values(updates[0].weights);
  CHECK(got[0] == Approx(1.25).epsilon(1e-15));
  CHECK(got[1] == 2.0);
  const auto stats = dp.take_stats();
  CHECK(stats.nonfinite == 1);
  CHECK(stats.clipped == 0);
}

TEST_CASE("DP: central noise z C per coordinate from the (seed, round) stream, once per aggregation", "[privacy]") {
  const auto global = model({0.0, 0.0, 0.0});
  std::vector<ClientUpdate> updates{update(3, {0.1, 0.0, 0.0})};
  const auto config = central(2.0, 0.5);  // noise std 1 on the sum
  DpMechanism dp(config, 42, 4.0);
  dp.privatise(global, updates, 3);
  const privacy::NoiseStream noise(42, 3, privacy::NoiseTag::UpdateNoise);
  const auto got = values(updates[0].weights);
  CHECK(got[0] == Approx((0.1 + noise.normal(0)) / 4).epsilon(1e-14));
  CHECK(got[1] == Approx(noise.normal(1) / 4).epsilon(1e-14));
  CHECK(got[2] == Approx(noise.normal(2) / 4).epsilon(1e-14));
  CHECK(dp.noise_std_on_mean(1, 4.0) == 0.25);
  // Another round draws other noise; the same round the same.
  std::vector<ClientUpdate> other{update(3, {0.1, 0.0, 0.0})}, same{update(3, {0.1, 0.0, 0.0})};
  dp.privatise(global, other, 4);
  dp.privatise(global, same, 3);
  CHECK(values(other[0].weights) != got);
  CHECK(values(same[0].weights) == got);
}

TEST_CASE("DP: local noise from each client's own stream, and FedBuff's weighted sum", "[privacy]") {
  auto config = central(1.0, 0.5);
  config.mode = PrivacyMode::local;
  const auto global = model({0.0, 0.0});
  DpMechanism dp(config, 42, 2.0);
  std::vector<double> sum;
  dp.accumulate(sum, update(7, {3.0, 4.0}).weights, flat_floats(global), 0.5, 7, 3);
  const privacy::NoiseStream mine(42, 3, privacy::NoiseTag::LocalNoise, 7u);
  CHECK(sum[0] == Approx(0.5 * (0.6 + 0.5 * mine.normal(0))).epsilon(1e-14));
  CHECK(sum[1] == Approx(0.5 * (0.8 + 0.5 * mine.normal(1))).epsilon(1e-14));
  const auto before = sum;
  dp.add_central_noise(sum, 3);  // local mode: the server adds nothing
  CHECK(sum == before);
  CHECK(dp.noise_std_on_mean(4, 2.0) == Approx(0.5 * 2 / 2.0));
  CHECK_THROWS(dp.accumulate(sum, global, flat_floats(global), 1.5, 7, 3));
}

TEST_CASE("The privacy ledger: which figure a scenario's world lets count", "[privacy]") {
  const auto poisson = parse_scenario(
      "[federation]\nclients = 100\n[sampler]\nname = \"poisson\"\nfraction = 0.1\n[privacy]\nmode = \"central\"\n",
      "p.toml");
  auto p = assess_privacy(poisson);
  CHECK(p.design == privacy::Sampling::Poisson);
  CHECK(p.rate == 0.1);
  CHECK(p.amplification_valid);
  CHECK(expected_cohort(poisson) == Approx(10.0));

  const auto uniform = parse_scenario(
      "[federation]\nclients = 100\n[sampler]\nclients_per_round = 5\n[privacy]\nmode = \"central\"\n", "u.toml");
  p = assess_privacy(uniform);
  CHECK(p.design == privacy::Sampling::FixedSize);
  CHECK(p.rate == 0.05);
  CHECK(p.amplification_valid);

  const auto labels = parse_scenario(
      "[federation]\nclients = 100\n[sampler]\nname = \"poisson\"\nfraction = 0.1\n[availability]\nmodel = "
      "\"bernoulli\"\nprobability = \"label_dirichlet\"\n[privacy]\nmode = \"central\"\n",
      "l.toml");
  p = assess_privacy(labels);
  CHECK_FALSE(p.amplification_valid);
  CHECK_FALSE(p.participation_data_independent);
  CHECK(p.why_not_amplified.find("labels") != std::string::npos);

  // Decided from the sampler's row, never its name: a plugin's sampler that does not say what it
  // reads may choose by the clients' data; one that declares a design and reads nothing earns it.
  const auto make = [](const Scenario& sc, const Population& pop) -> std::unique_ptr<Sampler> {
    return make_sampler("uniform", sc, pop);
  };
  if (find_sampler("silent-plugin") == nullptr) {
    register_sampler({"silent-plugin", "a plugin's sampler that says nothing", make});
    SamplerInfo declared{"declared-plugin", "a plugin's Poisson sampler that reads nothing", make};
    declared.design = SamplingDesign::poisson;
    declared.reads = "";
    register_sampler(declared);
    register_sampler({"declared-fixed-plugin", "a plugin's uniform sampler that reads nothing", make,
                      SamplingDesign::fixed_size, ""});
  }
  const auto with_sampler = [](const std::string& name) {
    return parse_scenario("[federation]\nclients = 100\n[sampler]\nname = \"" + name +
                              "\"\nfraction = 0.1\n[privacy]\nmode = \"central\"\n",
                          "s.toml");
  };
  p = assess_privacy(with_sampler("silent-plugin"));
  CHECK_FALSE(p.participation_data_independent);
  CHECK_FALSE(p.amplification_valid);
  CHECK(p.why_not_amplified.find("does not say what it reads") != std::string::npos);
  p = assess_privacy(with_sampler("declared-plugin"));
  CHECK(p.participation_data_independent);
  CHECK(p.amplification_valid);
  CHECK(p.design == privacy::Sampling::Poisson);
  CHECK(p.rate == 0.1);
  p = assess_privacy(with_sampler("declared-fixed-plugin"));
  CHECK(p.amplification_valid);
  CHECK(p.design == privacy::Sampling::FixedSize);
  p = assess_privacy(with_sampler("power_of_choice"));
  CHECK(p.why_not_amplified.find("sizes and training losses") != std::string::npos);
  // Validation reads the design too: a declared Poisson design draws its own cohort size, and a
  // declared fixed size may divide by the actual count.
  CHECK_THROWS_WITH(
      parse_scenario("[sampler]\nname = \"declared-plugin\"\n[simulation]\nmode = \"fedbuff\"\n", "s.toml"),
      Catch::Contains("sampler \"declared-plugin\" (a Poisson design) draws a sync round's cohort"));
  CHECK_NOTHROW(
      parse_scenario("[federation]\nclients = 100\n[sampler]\nname = \"declared-fixed-plugin\"\n"
                     "[privacy]\nmode = \"central\"\ndenominator = \"actual\"\n",
                     "s.toml"));
  // A timeline that switches to a sampler choosing by losses makes the run's choice data-dependent.
  p =
      assess_privacy(parse_scenario("[federation]\nclients = 100\n[privacy]\nmode = \"central\"\n[[timeline]]\n"
                                    "at_round = 3\naction = \"sampler\"\nsampler = \"power_of_choice\"\n",
                                    "s.toml"));
  CHECK_FALSE(p.participation_data_independent);

  PrivacyBook book(poisson);
  RoundReport r;
  book.record(r, {1, 5}, true, 1, 1.0, 0.1);
  book.record(r, {5}, true, 0, 1.0, 0.1);
  const privacy::RunEpsilon epsilon(assess_privacy(poisson));
  CHECK(r.dp);
  CHECK(r.dp_epsilon == epsilon.amplified(2));
  CHECK(r.dp_epsilon_amplified == epsilon.amplified(2));
  CHECK(r.dp_epsilon_max_client == epsilon.realised(2));  // client 5 took part twice
  CHECK(r.dp_epsilon < r.dp_epsilon_max_client);          // amplification helps
  book.record(r, {}, false, 0, 1.0, 0.0);                 // nothing released: nothing spent
  CHECK(r.dp_epsilon == epsilon.amplified(2));
  CHECK(book.budget_spent().empty());

  PrivacyBook tied(labels);
  RoundReport t;
  tied.record(t, {1}, true, 0, 1.0, 0.1);
  tied.record(t, {2}, true, 0, 1.0, 0.1);
  CHECK(t.dp_epsilon == privacy::RunEpsilon(assess_privacy(labels)).realised(2));  // every aggregation counted

  auto budget = poisson;
  budget.privacy.target_epsilon = epsilon.amplified(3) * 1.0000001;
  PrivacyBook limited(budget);
  RoundReport b;
  limited.record(b, {1}, true, 0, 1.0, 0.1);
  limited.record(b, {2}, true, 0, 1.0, 0.1);
  CHECK(limited.budget_spent().empty());  // a third fits
  limited.record(b, {3}, true, 0, 1.0, 0.1);
  CHECK(limited.budget_spent().find("target_epsilon") != std::string::npos);
}

TEST_CASE("Poisson sampler: each client at rate q, independent of the others and of count", "[sampler][privacy]") {
  PoissonSampler sampler(10, 0.3, 5);
  SelectionContext ctx;
  ctx.count = 1;  // ignored: the sampler draws the cohort's size
  ctx.eligible = [](std::uint32_t) { return true; };
  std::vector<int> freq(10, 0);
  const int rounds = 20000;
  std::size_t total = 0, empty = 0;
  for (int i = 0; i < rounds; ++i) {
    const auto chosen = sampler.select(ctx);
    CHECK(std::is_sorted(chosen.begin(), chosen.end()));
    total += chosen.size();
    empty += chosen.empty() ? 1 : 0;
    for (auto c : chosen) ++freq[c];
  }
  for (int f : freq) CHECK(std::abs(f - 0.3 * rounds) < 4 * std::sqrt(rounds * 0.3 * 0.7));
  // The mean cohort is n q = 3, within 4 standard errors (sqrt(n q (1 - q) / rounds) = 0.010).
  CHECK(std::abs(static_cast<double>(total) / rounds - 3.0) < 0.042);
  CHECK(std::abs(static_cast<double>(empty) / rounds - std::pow(0.7, 10)) < 0.005);  // 0.028: cohorts vary
  CHECK(sampler.draws_cohort_size());
  PoissonSampler all(6, 1.0, 1), none(6, 0.0, 1);
  CHECK(all.select(ctx) == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
  CHECK(none.select(ctx).empty());
  ctx.eligible = [](std::uint32_t c) { return c % 2 == 0; };
  for (auto c : all.select(ctx)) CHECK(c % 2 == 0);
  PoissonSampler a(50, 0.2, 9), b(50, 0.2, 9);
  CHECK(a.select(ctx) == b.select(ctx));
}

TEST_CASE("Adaptive clipping: the spec's A1 to A4, and the clip a run carries", "[privacy]") {
  CHECK(privacy::update_noise_multiplier(1.0, 5.0) == Approx(1.005037815259212).epsilon(1e-14));
  CHECK_THROWS_AS(privacy::update_noise_multiplier(1.0, 0.5), std::invalid_argument);
  CHECK(privacy::next_clip(1.0, 7, 10, 0.0, 10.0, 0.5, 0.2) == Approx(0.9607894391523232).epsilon(1e-15));
  CHECK(privacy::next_clip(1.0, 7, 10, 6.0, 10.0, 0.5, 0.2) == Approx(0.9048374180359595).epsilon(1e-15));

  auto config = central(1.0, 0.5);
  config.clip_mode = DpClip::adaptive;
  config.count_noise = 1.0;
  DpMechanism dp(config, 42, 2.0);
  const auto global = model({0.0, 0.0});
  std::vector<ClientUpdate> updates{update(0, {3.0, 4.0}), update(1, {0.3, 0.4})};  // norms 5 and 0.5
  dp.privatise(global, updates, 2);
  const auto stats = dp.take_stats();
  CHECK(stats.clip == 1.0);  // this aggregation clipped at C_0
  CHECK(stats.noise_std == Approx(privacy::update_noise_multiplier(0.5, 1.0) * 1.0 / 2.0).epsilon(1e-14));
  const double count = privacy::NoiseStream(42, 2, privacy::NoiseTag::CountNoise).normal(0);
  CHECK(dp.clip() == Approx(privacy::next_clip(1.0, 1, 2, count, 2.0, 0.5, 0.2)).epsilon(1e-15));

  auto saved = StateArchive::writer();
  dp.archive(saved);
  DpMechanism restored(config, 42, 2.0);
  auto in = StateArchive::reader(saved.bytes(), "test");
  restored.archive(in);
  CHECK(restored.clip() == dp.clip());
}
