#include "catch_torch.hpp"

#include <numeric>
#include <set>

#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/data/partition.hpp"
#include "engine/sampling/samplers.hpp"

using namespace drift;

namespace {

std::vector<std::int64_t> balanced_labels(std::int64_t per_class, std::int64_t classes) {
  std::vector<std::int64_t> labels;
  for (std::int64_t i = 0; i < per_class * classes; ++i) labels.push_back(i % classes);
  return labels;
}

std::size_t total_size(const Partition& p) {
  std::size_t n = 0;
  for (const auto& c : p.indices) n += c.size();
  return n;
}

// Every sample is held by exactly one client.
void require_exact_cover(const Partition& p, std::size_t n) {
  std::vector<int> seen(n, 0);
  for (const auto& c : p.indices)
    for (auto i : c) ++seen.at(static_cast<std::size_t>(i));
  for (auto s : seen) REQUIRE(s == 1);
}

}  // namespace

TEST_CASE("streams are keyed by purpose and ids, and reproducible", "[rng]") {
  CHECK(stream_seed(1, "sample", {3}) == stream_seed(1, "sample", {3}));
  CHECK(stream_seed(1, "sample", {3}) != stream_seed(1, "sample", {4}));
  CHECK(stream_seed(1, "sample", {3}) != stream_seed(2, "sample", {3}));
  CHECK(stream_seed(1, "sample", {3}) != stream_seed(1, "batch-order", {3}));
  CHECK(stream_seed(1, "x", {1, 2}) != stream_seed(1, "x", {2, 1}));

  Rng a(42), b(42);
  for (int i = 0; i < 100; ++i) REQUIRE(a.next_u64() == b.next_u64());
}

TEST_CASE("uniform draws and bounded integers stay in range and look uniform", "[rng]") {
  Rng rng(7);
  std::vector<int> counts(6, 0);
  const int n = 60000;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    ++counts[rng.below(6)];
  }
  // Each bucket expects 10000; 5 sigma is about 456.
  for (int c : counts) CHECK(std::abs(c - 10000) < 460);
}

TEST_CASE("Dirichlet draws sum to one for any alpha, including tiny ones", "[rng]") {
  Rng rng(3);
  for (double alpha : {1e-6, 1e-3, 0.1, 1.0, 100.0}) {
    auto p = dirichlet_draw(rng, alpha, 20);
    const double sum = std::accumulate(p.begin(), p.end(), 0.0);
    CHECK(sum == Approx(1.0).epsilon(1e-12));
    for (double x : p) CHECK(x >= 0.0);
  }
  // Large alpha concentrates on the uniform vector; mean of Gamma(alpha) is alpha.
  double mean_log = 0.0;
  for (int i = 0; i < 2000; ++i) mean_log += std::exp(rng.log_gamma_draw(5.0));
  CHECK(mean_log / 2000 == Approx(5.0).epsilon(0.05));
}

TEST_CASE("IID partition gives near-equal shares and covers every sample once", "[partition]") {
  Rng rng(1);
  auto p = partition_iid(103, 10, rng);
  REQUIRE(p.num_clients() == 10);
  CHECK(total_size(p) == 103u);
  for (std::size_t k = 0; k < 10; ++k) CHECK(p.indices[k].size() == (k < 3 ? 11u : 10u));
  require_exact_cover(p, 103);
  for (const auto& c : p.indices) CHECK(std::is_sorted(c.begin(), c.end()));
}

TEST_CASE("Dirichlet partition covers the data, respects the minimum and is deterministic", "[partition]") {
  const auto labels = balanced_labels(300, 10);  // 3000 samples
  PartitionConfig config;                        // the row reads its keys; min_client_samples defaults to 10 there
  config.params.set("alpha", 0.3);
  config.params.set("min_client_samples", std::int64_t{20});
  auto a = make_partition(config, labels, 10, 12, 5);
  auto b = make_partition(config, labels, 10, 12, 5);
  auto c = make_partition(config, labels, 10, 12, 6);
  REQUIRE(a.indices == b.indices);
  REQUIRE(a.indices != c.indices);
  require_exact_cover(a, labels.size());
  for (const auto& client : a.indices) CHECK(client.size() >= 20u);

  // Histograms agree with the indices, and small alpha skews them.
  auto hist = class_histograms(a, labels, 10);
  std::int64_t skewed_clients = 0;
  for (std::size_t k = 0; k < hist.size(); ++k) {
    CHECK(std::accumulate(hist[k].begin(), hist[k].end(), std::int64_t{0}) ==
          static_cast<std::int64_t>(a.indices[k].size()));
    const auto top = *std::max_element(hist[k].begin(), hist[k].end());
    skewed_clients += top * 3 > static_cast<std::int64_t>(a.indices[k].size());  // one class > 1/3 of the data
  }
  CHECK(skewed_clients >= 6);
}

TEST_CASE("Dirichlet partition terminates for tiny alpha: one class per client", "[partition]") {
  // With alpha -> 0 each class goes whole to one client; the N/K cap then forces ten distinct
  // clients, so ten clients end up with exactly one full class each.
  const auto labels = balanced_labels(50, 10);
  Rng rng(11);
  auto p = partition_dirichlet(labels, 10, 10, 1e-4, 1, 100, rng);
  auto hist = class_histograms(p, labels, 10);
  for (const auto& h : hist) {
    CHECK(std::count(h.begin(), h.end(), 50) == 1);
    CHECK(std::count(h.begin(), h.end(), 0) == 9);
  }
}

TEST_CASE("Dirichlet partition reports constraints it cannot meet", "[partition]") {
  const auto labels = balanced_labels(10, 10);  // 100 samples
  Rng rng(1);
  // Impossible on its face: 20 clients x 10 samples > 100.
  CHECK_THROWS_WITH(partition_dirichlet(labels, 10, 20, 0.5, 10, 100, rng),
                    Catch::Contains("at least 10 samples each from 100"));
  // Possible in principle but not with such a tiny alpha: 20 clients, 10 classes.
  CHECK_THROWS_WITH(partition_dirichlet(labels, 10, 20, 1e-5, 2, 50, rng), Catch::Contains("after 50 attempts"));
}

TEST_CASE("label shards give each client shards_per_client contiguous label runs", "[partition]") {
  const auto labels = balanced_labels(20, 10);  // 200 samples, 20 per class
  Rng rng(2);
  auto p = partition_shards(labels, 10, 2, rng);  // 20 shards of 10 samples: each half a class
  require_exact_cover(p, labels.size());
  auto hist = class_histograms(p, labels, 10);
  for (std::size_t k = 0; k < 10; ++k) {
    CHECK(p.indices[k].size() == 20u);
    const auto classes = std::count_if(hist[k].begin(), hist[k].end(), [](auto v) { return v > 0; });
    CHECK(classes <= 2);
  }
  CHECK_THROWS_AS(partition_shards(labels, 150, 2, rng), UserError);
}

TEST_CASE("uniform sampler draws distinct sorted cohorts with equal frequencies", "[sampler]") {
  SelectionContext ctx;
  ctx.count = 8;
  ctx.eligible = [](std::uint32_t) { return true; };
  UniformSampler a(20, 99), b(20, 99);
  REQUIRE(a.select(ctx) == b.select(ctx));
  UniformSampler sampler(20, 99);
  std::vector<int> freq(20, 0);
  const int rounds = 5000;
  for (std::uint32_t r = 1; r <= rounds; ++r) {
    ctx.round = r;
    auto cohort = sampler.select(ctx);
    REQUIRE(cohort.size() == 8u);
    REQUIRE(std::is_sorted(cohort.begin(), cohort.end()));
    REQUIRE(std::set<std::uint32_t>(cohort.begin(), cohort.end()).size() == 8u);
    for (auto c : cohort) ++freq[c];
  }
  // Each client expects 2000 selections (p = 0.4); sd = sqrt(5000*0.4*0.6) ~ 35; allow 5 sd.
  for (int f : freq) CHECK(std::abs(f - 2000) < 175);
}
