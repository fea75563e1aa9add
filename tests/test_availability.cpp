// The pieces of the virtual world the drivers consult: staleness weights, drift distances,
// availability models and traces, and the scenario errors of timelines and groups.
#include "catch_torch.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/compose/loader.hpp"
#include "engine/core/error.hpp"
#include "engine/population/availability.hpp"
#include "engine/sim/drift_metrics.hpp"
#include "engine/sim/staleness.hpp"

using namespace drift;

TEST_CASE("staleness functions", "[sim][async]") {
  CHECK(StalenessFunction{StalenessKind::constant, 0.5, 4}(9) == 1.0);
  CHECK(StalenessFunction{StalenessKind::polynomial, 0.5, 4}(3) == Approx(0.5));
  CHECK(StalenessFunction{StalenessKind::hinge, 10, 4}(4) == 1.0);
  CHECK(StalenessFunction{StalenessKind::hinge, 10, 4}(6) == Approx(1.0 / 21.0));
}

TEST_CASE("drift distances", "[sim][drift]") {
  const std::vector<double> p = {0.5, 0.5, 0.0}, q = {0.0, 0.5, 0.5};
  CHECK(total_variation(p, q) == Approx(0.5));
  CHECK(total_variation(p, p) == 0.0);
  // JS divergence of p and q: each has KL to m = (0.25, 0.5, 0.25) of 0.5*log2(2) = 0.5.
  CHECK(jensen_shannon_distance(p, q) == Approx(std::sqrt(0.5)));
  CHECK(jensen_shannon_distance({1, 0}, {0, 1}) == Approx(1.0));
  DriftWindow w(2);
  w.push({1, 0});
  w.push({0, 1});
  w.push({0, 3});
  CHECK(w.sum() == std::vector<double>{0, 4});
}

TEST_CASE("participation bias over a large population is the dense total variation", "[sim][drift][bias]") {
  // The window touches few clients of many; the value is the definition, summed over all of them.
  const std::uint32_t n = 50000;
  std::vector<std::uint64_t> samples(n);
  for (std::uint32_t i = 0; i < n; ++i) samples[i] = 1 + (i * 7919u) % 97;
  ParticipationBias bias(samples, 3);
  std::vector<ClientShares> pushed;
  for (std::uint32_t a = 0; a < 4; ++a) {
    ClientShares shares;
    for (std::uint32_t k = 0; k < 40; ++k) shares.emplace_back((a * 977u + k * 1231u) % n, 0.01 + 0.001 * k);
    shares.emplace_back(shares.front());  // a client counted twice in one aggregation
    bias.push(shares);
    pushed.push_back(shares);
  }
  std::vector<double> given(n, 0.0), data(samples.begin(), samples.end()), uniform(n, 1.0 / n);
  for (std::size_t a = 1; a < pushed.size(); ++a)  // the last three
    for (const auto& [c, share] : pushed[a]) given[c] += share;
  const auto dense = normalised(given);
  // Summed in long double: a running double sum of 50,000 terms is off by about 1e-12.
  auto tv = [&](const std::vector<double>& objective) {
    long double sum = 0;
    for (std::uint32_t i = 0; i < n; ++i) sum += std::abs(static_cast<long double>(dense[i]) - objective[i]);
    return static_cast<double>(sum / 2);
  };
  CHECK(bias.against_samples() == Approx(tv(normalised(data))).epsilon(1e-15));
  CHECK(bias.against_uniform() == Approx(tv(uniform)).epsilon(1e-15));
}

TEST_CASE("participation bias: the window's shares against n_i / n and 1 / N", "[sim][drift][bias]") {
  ParticipationBias bias({1, 1, 2}, 2);       // data weights (1/4, 1/4, 1/2)
  CHECK(std::isnan(bias.against_samples()));  // no share yet
  bias.push({{0, 1.0}});                      // (1, 0, 0)
  CHECK(bias.against_samples() == Approx(0.75));
  CHECK(bias.against_uniform() == Approx(2.0 / 3));
  bias.push({{1, 0.5}, {2, 0.5}});  // window (1, 0.5, 0.5) / 2
  CHECK(bias.against_samples() == Approx(0.25));
  CHECK(bias.against_uniform() == Approx(1.0 / 6));
  // A checkpoint keeps the window: the copy goes on exactly as the original.
  auto out = StateArchive::writer();
  bias.archive(out);
  ParticipationBias restored({1, 1, 2}, 2);
  auto in = StateArchive::reader(out.take(), "bias");
  restored.archive(in);
  in.expect_end();
  for (auto* b : {&bias, &restored}) {
    b->push({});  // an aggregation that gave nobody a share: window (0, 0.5, 0.5)
    CHECK(b->against_samples() == Approx(0.25));
    CHECK(b->against_uniform() == Approx(1.0 / 3));
    b->push({});
    CHECK(std::isnan(b->against_uniform()));  // the window holds no share any more
  }
}

TEST_CASE("availability models", "[sim][availability]") {
  AvailabilityConfig diurnal;
  diurnal.model = "diurnal";
  diurnal.params.set("period", 100.0);
  diurnal.params.set("duty", 0.3);
  diurnal.params.set("phase", 10.0);  // online for t in [-10, 20) + 100k
  auto d = make_availability_model(diurnal, 1, 1, 0);
  CHECK(d->online(0, 0.0));
  CHECK(d->online(0, 19.9));
  CHECK_FALSE(d->online(0, 20.0));
  CHECK(d->online(0, 95.0));
  CHECK(d->next_offline(0, 5.0) == Approx(20.0));
  CHECK(d->next_offline(0, 50.0) == 50.0);

  AvailabilityConfig markov;
  markov.model = "markov";
  markov.params.set("mean_online", 3.0);
  markov.params.set("mean_offline", 1.0);
  auto m = make_availability_model(markov, 50, 7, 0);
  int online = 0, samples = 0;
  for (std::uint32_t c = 0; c < 50; ++c)
    for (double t = 0; t < 400; t += 2.0, ++samples) online += m->online(c, t);
  CHECK(static_cast<double>(online) / samples == Approx(0.75).margin(0.04));
  auto again = make_availability_model(markov, 50, 7, 0);
  for (double t = 0; t < 50; t += 0.7) CHECK(again->online(3, t) == m->online(3, t));
}

TEST_CASE("malformed traces are rejected with the file and line", "[sim][availability]") {
  const auto dir = std::filesystem::temp_directory_path();
  auto write = [&](const std::string& name, const std::string& text) {
    const auto path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
  };
  AvailabilityConfig c;
  c.model = "trace";
  auto error = [&](const std::string& path) {
    c.params.set("trace", path);
    try {
      make_availability_model(c, 5, 1, 0);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error(write("drift-unsorted.csv", "client,start,end\n0,10,20\n0,0,5\n")),
             Catch::Contains("drift-unsorted.csv:3") && Catch::Contains("not sorted"));
  CHECK_THAT(error(write("drift-overlap.csv", "client,start,end\n0,0,10\n0,5,20\n")), Catch::Contains("overlaps"));
  CHECK_THAT(error(write("drift-negative.csv", "client,start,end\n1,-4,2\n")), Catch::Contains("negative start"));
  CHECK_THAT(error(write("drift-header.csv", "client,begin,end\n1,0,2\n")), Catch::Contains("lacks column 'start'"));
  CHECK_THAT(error(write("drift-client.csv", "client,start,end\n9,0,2\n")), Catch::Contains("client 9"));
  CHECK_THAT(error((dir / "drift-no-such-trace.csv").string()), Catch::Contains("cannot open"));
  c.params.set("trace", write("drift-good.csv", "client,start,end\n0,0,10\n0,10,15\n0,20,30\n"));
  auto t = make_availability_model(c, 5, 1, 0);
  CHECK(t->online(0, 12));
  CHECK_FALSE(t->online(0, 17));
  CHECK(t->next_offline(0, 1) == 15.0);  // back-to-back intervals are one online period
  CHECK_FALSE(t->online(1, 0));          // a client the trace does not name is offline
  CHECK(t->next_online(0, 17) == 20.0);  // the next interval's start
  CHECK(t->next_online(0, 12) == 12.0);  // online now
  CHECK(t->next_online(0, 30) == kNever);
  CHECK(t->next_online(1, 0) == kNever);
}

TEST_CASE("next_online: when each availability model next lets a client in", "[sim][availability]") {
  AvailabilityConfig c;
  c.model = "diurnal";
  c.params.set("period", 100.0);
  c.params.set("duty", 0.25);
  c.params.set("phase", 0.0);
  auto diurnal = make_availability_model(c, 5, 1, 0);
  CHECK(diurnal->next_online(0, 10.0) == 10.0);   // online in [0, 25)
  CHECK(diurnal->next_online(0, 30.0) == 100.0);  // offline until the next period
  c.params.set("duty", 0.0);
  CHECK(make_availability_model(c, 5, 1, 0)->next_online(0, 30.0) == kNever);
  c.model = "markov";
  c.params.set("mean_online", 10.0);
  c.params.set("mean_offline", 10.0);
  auto markov = make_availability_model(c, 5, 1, 0);
  for (double t : {0.0, 7.0, 33.0, 120.0}) {
    const double on = markov->next_online(2, t);
    CHECK(on >= t);
    CHECK(markov->online(2, on));
    if (on > t) CHECK_FALSE(markov->online(2, (t + on) / 2));
  }
}

TEST_CASE("timeline and group errors name the entry", "[sim][scenario]") {
  auto error = [](const std::string& text) {
    try {
      parse_scenario(text, "t.toml");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string groups = "[groups.night]\nrule = \"id_range\"\nfrom = 0\nto = 3\n";
  CHECK_THAT(error(groups + "[[timeline]]\nat_round = 2\naction = \"offline\"\ngroup = \"nigt\"\n"),
             Catch::Contains("timeline[1]: unknown group 'nigt' (did you mean 'night'?)"));
  CHECK_THAT(error(groups + "[[timeline]]\nat_time = -5.0\naction = \"offline\"\ngroup = \"night\"\n"),
             Catch::Contains("timeline[1].at_time must be >= 0"));
  CHECK_THAT(error(groups + "[[timeline]]\naction = \"offline\"\ngroup = \"night\"\n"),
             Catch::Contains("exactly one of at_round and at_time"));
  CHECK_THAT(error(groups + "[[timeline]]\nat_round = 1\naction = \"explode\"\n"), Catch::Contains("unknown action"));
  CHECK_THAT(error(groups + "[[timeline]]\nat_round = 1\naction = \"sampler\"\nsampler = \"cyclc\"\n"),
             Catch::Contains("did you mean 'cyclic'"));
  CHECK_THAT(error("[groups.a]\nrule = \"dominant_label\"\n"), Catch::Contains("groups.a.labels is required"));
  // One number is a list of one label; a fractional one is no class id (a fuzzer found the
  // scalar reaching a list's check).
  CHECK_THAT(error("[groups.a]\nrule = \"dominant_label\"\nlabels = 43200.0\n"),
             Catch::Contains("groups.a.labels must hold integer class ids"));
  CHECK_THAT(error("[groups.a]\nrule = \"dominant_label\"\nlabels = []\n"), Catch::Contains("must not be empty"));
  const auto one = parse_scenario("[groups.a]\nrule = \"dominant_label\"\nlabels = 3\n", "t.toml");
  REQUIRE(one.groups.size() == 1);
  CHECK(one.groups[0].labels == std::vector<std::int64_t>{3});
  CHECK_THAT(error("[groups.a]\nrule = \"id_range\"\nfrom = 5\nto = 1\n"), Catch::Contains("groups.a.to must be >="));
  CHECK_THAT(error("[groups.a]\nrule = \"proportion\"\nshare = 0.5\nspeeed = 3\n"), Catch::Contains("groups.a.speeed"));
  CHECK_THAT(error("[groups.a]\nrule = \"proportion\"\nshare = 0.5\n[groups.a.profile]\nsped = 3.0\n"),
             Catch::Contains("did you mean 'groups.a.profile.speed'"));
}
