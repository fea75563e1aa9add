#include "catch_torch.hpp"

#include "engine/core/named_tensors.hpp"
#include "engine/models/model.hpp"

using namespace drift;

TEST_CASE("every catalogued model maps grey 28x28 images to logits and features", "[models]") {
  for (const auto& name : model_names()) {
    ModelOptions options;
    options.width = 8;  // keeps the ResNets small; the CNNs ignore it
    auto model = make_model(name, {1, 28, 28}, 10, 1, options);
    auto out = model->forward(torch::rand({3, 1, 28, 28}));
    INFO(name);
    CHECK(out.logits.sizes() == torch::IntArrayRef({3, 10}));
    CHECK(out.features.sizes() == torch::IntArrayRef({3, model->feature_dim()}));
    CHECK(out.levels.empty());
  }
}

TEST_CASE("model options: projection head, cosine head and feature levels", "[models]") {
  ModelOptions projected;
  projected.projection_dim = 32;
  auto moon = make_model("small-cnn", {1, 28, 28}, 10, 1, projected);
  CHECK(moon->feature_dim() == 32);
  CHECK(moon->forward(torch::rand({2, 1, 28, 28})).features.size(1) == 32);

  ModelOptions cosine;
  cosine.head = HeadKind::cosine;
  auto nh = make_model("small-cnn", {1, 28, 28}, 10, 1, cosine);
  const auto params = nh->named_parameters(true);
  const auto w = params["head.weight"].to(torch::kFloat64);
  // Orthogonal unit prototypes (C = 10 <= d = 128), scale 1.
  CHECK(torch::allclose(w.matmul(w.t()), torch::eye(10, torch::kFloat64), 1e-6, 1e-6));
  CHECK(params["head.scale"].item<double>() == 1.0);
  // logits = s * cos(z, W_c), so they lie in [-s, s].
  CHECK(nh->forward(torch::rand({4, 1, 28, 28})).logits.abs().max().item<double>() <= 1.0 + 1e-6);

  ModelOptions levels;
  levels.feature_levels = true;
  levels.width = 4;
  CHECK(make_model("small-cnn", {1, 28, 28}, 10, 1, levels)->forward(torch::rand({2, 1, 28, 28})).levels.size() == 3);
  CHECK(make_model("resnet8", {1, 28, 28}, 10, 1, levels)->forward(torch::rand({2, 1, 28, 28})).levels.size() == 4);
  auto r10 = make_model("resnet10", {1, 28, 28}, 10, 1, levels)->forward(torch::rand({2, 1, 28, 28}));
  REQUIRE(r10.levels.size() == 5);
  CHECK(r10.levels.back().size(1) == 32);  // 8 x width
  CHECK(torch::equal(r10.levels.back(), r10.features));
}

TEST_CASE("a model rebuilt from its recipe is the same initial model", "[models]") {
  ModelOptions options;
  options.width = 4;
  options.projection_dim = 16;
  auto a = make_model("resnet8", {1, 28, 28}, 10, 7, options);
  auto b = make_model(a->recipe());
  const auto sa = state_of(*a), sb = state_of(*b);
  REQUIRE(sa.size() == sb.size());
  for (std::size_t i = 0; i < sa.size(); ++i) CHECK(torch::equal(sa[i].value, sb[i].value));
  // Another seed, another model.
  auto c = make_model("resnet8", {1, 28, 28}, 10, 8, options);
  CHECK_FALSE(torch::equal(state_of(*c)[0].value, sa[0].value));
}

TEST_CASE("the plain small CNN keeps its tensor names", "[models]") {
  std::vector<std::string> names;
  for (const auto& t : state_of(*make_model("small-cnn", {1, 28, 28}, 10, 1))) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc.weight",
                                          "fc.bias", "head.weight", "head.bias"});
}

TEST_CASE("unknown models and impossible inputs are refused", "[models]") {
  CHECK_THROWS_WITH(make_model("resnet99", {1, 28, 28}, 10, 1), Catch::Contains("unknown model"));
  CHECK_THROWS_WITH(make_model("small-cnn", {1, 8, 8}, 10, 1), Catch::Contains("large enough"));
}
