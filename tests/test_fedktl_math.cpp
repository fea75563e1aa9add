// FedKTL's building blocks against their definitions and hand-computed values (docs/algorithms.md#fedktl).
#include "catch_torch.hpp"

#include "engine/algorithms/fedktl_math.hpp"

using namespace drift;

namespace {

void check_etf(const torch::Tensor& v, std::int64_t classes) {
  REQUIRE(v.size(1) == classes);
  const auto norms = v.norm(2, 0);
  CHECK((norms - 1).abs().max().item<double>() < 1e-5);
  const auto gram = v.t().matmul(v);
  const double off = -1.0 / static_cast<double>(classes - 1);
  for (std::int64_t a = 0; a < classes; ++a)
    for (std::int64_t b = 0; b < classes; ++b)
      if (a != b) CHECK(gram[a][b].item<double>() == Approx(off).margin(1e-5));
}

}  // namespace

TEST_CASE("simplex ETF: unit columns with pairwise cosine -1/(C-1) for K = C, K > C and K = C-1", "[fedktl]") {
  for (auto [k, c] : {std::pair<std::int64_t, std::int64_t>{10, 10}, {16, 10}, {9, 10}, {1, 2}, {2, 3}}) {
    auto rng = make_stream(7, "fedktl-etf");
    const auto v = simplex_etf(k, c, rng);
    CHECK(v.size(0) == k);
    check_etf(v, c);
  }
  auto a = make_stream(7, "fedktl-etf"), b = make_stream(7, "fedktl-etf"), other = make_stream(8, "fedktl-etf");
  const auto va = simplex_etf(12, 10, a);
  CHECK(torch::equal(va, simplex_etf(12, 10, b)));  // seeded
  CHECK_FALSE(torch::allclose(va, simplex_etf(12, 10, other)));
  CHECK(va.sum(1).abs().max().item<double>() < 1e-5);  // the columns sum to zero
  auto r = make_stream(1, "x");
  CHECK_THROWS_WITH(simplex_etf(8, 10, r), Catch::Contains("needs K >= 9, got 8"));
  CHECK_THROWS_AS(simplex_etf(3, 1, r), std::invalid_argument);
}

TEST_CASE("ArcFace: hand-computed values, and finite with finite gradients at cos = +-1", "[fedktl]") {
  const auto labels = torch::tensor({0}, torch::kInt64);
  // s = 1, m = 0: -log(e^0.5 / (e^0.5 + e^0)) = log(1 + e^-0.5).
  CHECK(arcface_loss(torch::tensor({{0.5, 0.0}}), labels, 1.0, 0.0).item<double>() ==
        Approx(0.4740769842).epsilon(1e-6));
  // s = 2, m = 0.5: the target logit is 2 cos(acos(0.5) + 0.5) = 2 * 0.0235965853.
  CHECK(arcface_loss(torch::tensor({{0.5, 0.0}}), labels, 2.0, 0.5).item<double>() ==
        Approx(0.6698289689).epsilon(1e-6));

  auto cos =
      torch::tensor({{1.0f, -1.0f, 0.0f}, {-1.0f, 1.0f, 1.0f}, {1.0000001f, 0.0f, -1.0000001f}}).requires_grad_(true);
  const auto loss = arcface_loss(cos, torch::tensor({0, 0, 2}, torch::kInt64), 64.0, 0.5);
  CHECK(std::isfinite(loss.item<double>()));
  loss.backward();
  CHECK(torch::isfinite(cos.grad()).all().item<bool>());
}

TEST_CASE("median bandwidths make the MMD scale-free, the fixed ones vanish for wide latents", "[fedktl]") {
  torch::manual_seed(3);
  const auto x = torch::randn({20, 64}, torch::kFloat64), y = torch::randn({20, 64}, torch::kFloat64) + 0.5;
  const double base = mmd_rbf(x, y, median_bandwidths(x, y)).item<double>();
  CHECK(base > 0.0);
  for (double k : {0.01, 10.0, 100.0})
    CHECK(mmd_rbf(k * x, k * y, median_bandwidths(k * x, k * y)).item<double>() == Approx(base).epsilon(1e-9));
  // At Stable Diffusion's scale the fixed set underflows to nothing.
  const auto wx = torch::randn({8, 16384}, torch::kFloat64), wy = torch::randn({8, 16384}, torch::kFloat64) + 0.5;
  // Only the diagonals of K(x,x) and K(y,y) are left: 2 * (8 entries * 4 kernels) / 64 = 1.
  const auto fixed = mmd_rbf(wx, wy) - 1.0;
  CHECK(std::abs(fixed.item<double>()) < 1e-12);
  CHECK(mmd_rbf(wx, wy, median_bandwidths(wx, wy)).item<double>() > 0.01);
}

TEST_CASE("RBF MMD against a hand-computed value", "[fedktl]") {
  // x = {0, 1}, y = {0, 3}, one bandwidth w = 1: K = exp(-d^2 / 2).
  //   mean Kxx = (2 + 2e^-0.5) / 4, mean Kyy = (2 + 2e^-4.5) / 4,
  //   mean Kxy = (1 + e^-4.5 + e^-0.5 + e^-2) / 4; MMD = Kxx + Kyy - 2 Kxy = 0.4323323584.
  const auto x = torch::tensor({{0.0}, {1.0}}, torch::kFloat64);
  const auto y = torch::tensor({{0.0}, {3.0}}, torch::kFloat64);
  CHECK(mmd_rbf(x, y, {1.0}).item<double>() == Approx(0.4323323584).epsilon(1e-9));
  CHECK(mmd_rbf(x, x).item<double>() == Approx(0.0).margin(1e-12));
  // The default bandwidths sum four kernels: MMD of well-separated clouds approaches 2 * 4 = 8.
  const auto far = torch::full({3, 2}, 1000.0, torch::kFloat64);
  CHECK(mmd_rbf(torch::zeros({3, 2}, torch::kFloat64), far).item<double>() == Approx(8.0).epsilon(1e-9));
}

TEST_CASE("latent alignment: centroids are the class means of F(P), absent classes keep theirs", "[fedktl]") {
  torch::manual_seed(3);
  FeatureTransformer transformer(3, 2);
  auto centroids = torch::full({4, 2}, 5.0);  // class 3 never uploads
  const auto prototypes = torch::tensor(
      {{1.0f, 0.0f, 0.0f}, {0.9f, 0.1f, 0.0f}, {0.0f, 1.0f, 0.0f}, {0.1f, 0.9f, 0.0f}, {0.0f, 0.0f, 1.0f}});
  const auto labels = torch::tensor({0, 0, 1, 1, 2}, torch::kInt64);
  auto latent_rng = make_stream(1, "latents");
  auto sample = [&](std::int64_t n) {
    auto w = torch::empty({n, 2});
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < 2; ++j) w[i][j] = latent_rng.normal();
    return w;
  };
  LatentAlignmentOptions options;
  options.epochs = 5;
  options.batch_size = 4;  // 5 prototypes: the last batch holds one and is skipped
  auto rng = make_stream(1, "fedktl-server");
  const double loss = align_latents(transformer, centroids, prototypes, labels, sample, options, rng);
  CHECK(std::isfinite(loss));
  CHECK(loss > 0.0);

  torch::NoGradGuard no_grad;
  transformer->eval();
  const auto mapped = transformer->forward(prototypes);
  CHECK(torch::allclose(centroids[0], mapped.narrow(0, 0, 2).mean(0), 1e-5, 1e-6));
  CHECK(torch::allclose(centroids[1], mapped.narrow(0, 2, 2).mean(0), 1e-5, 1e-6));
  CHECK(torch::allclose(centroids[2], mapped[4], 1e-5, 1e-6));
  CHECK(torch::equal(centroids[3], torch::full({2}, 5.0f)));

  // One prototype alone: no batch can train (BatchNorm), nothing crashes, the centroid is still set.
  auto single = torch::zeros({4, 2});
  CHECK(align_latents(transformer, single, prototypes.narrow(0, 0, 1), labels.narrow(0, 0, 1), sample, options, rng) ==
        0.0);
  CHECK(torch::isfinite(single).all().item<bool>());
}
