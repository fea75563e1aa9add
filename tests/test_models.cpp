#include "catch_torch.hpp"

#include <cmath>
#include <map>

#include "engine/models/model.hpp"
#include "engine/tensors/named_tensors.hpp"

using namespace drift;

TEST_CASE("every catalogued image model maps grey 28x28 images to logits and features", "[models]") {
  for (const auto& name : model_names()) {
    if (find_model(name)->text) continue;       // char-lstm: test_leaf_augment
    if (find_model(name)->any_input) continue;  // torchscript: test_torchscript
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

TEST_CASE("the heterogeneous group: ResNet-4/6/18/34, MobileNetV2 and GoogLeNet-style", "[models]") {
  auto parameters = [](const std::shared_ptr<Model>& m) {
    std::int64_t n = 0;
    for (const auto& p : m->parameters()) n += p.numel();
    return n;
  };
  // The published counts for 3x32x32 inputs and 10 classes: the CIFAR ResNet-18 (3x3 stem,
  // no max-pool) and torchvision's MobileNetV2 (the stem's stride does not change the count).
  CHECK(parameters(make_model("resnet18", {3, 32, 32}, 10, 1)) == 11173962);
  CHECK(parameters(make_model("mobilenetv2", {3, 32, 32}, 10, 1)) == 2236682);
  CHECK(make_model("mobilenetv2", {1, 28, 28}, 10, 1)->feature_dim() == 1280);
  CHECK(make_model("googlenet", {1, 28, 28}, 10, 1)->feature_dim() == 512);  // inception 4a's output

  ModelOptions small;
  small.width = 8;
  small.feature_levels = true;
  const std::pair<const char*, std::int64_t> widths[] = {
      {"resnet4", 8}, {"resnet6", 16}, {"resnet18", 64}, {"resnet34", 64}};
  for (const auto& [name, dim] : widths) {
    INFO(name);
    auto model = make_model(name, {1, 28, 28}, 10, 1, small);
    CHECK(model->feature_dim() == dim);
    const auto out = model->forward(torch::rand({2, 1, 28, 28}));
    const auto stages = std::string(name) == "resnet4" ? 1 : std::string(name) == "resnet6" ? 2 : 4;
    CHECK(out.levels.size() == static_cast<std::size_t>(stages + 1));  // the stem, then one per stage
  }
  // resnet8 and resnet10 keep the tensor names they had before stages could hold several blocks.
  const auto names = make_model("resnet10", {1, 28, 28}, 10, 1, small)->named_parameters(true).keys();
  CHECK(std::find(names.begin(), names.end(), "layer4.conv1.weight") != names.end());
  const auto deep = make_model("resnet34", {1, 28, 28}, 10, 1, small)->named_parameters(true).keys();
  CHECK(std::find(deep.begin(), deep.end(), "layer3_5.conv2.weight") != deep.end());
}

TEST_CASE("the pooling matrix used on GPUs is AdaptiveAvgPool1d", "[models]") {
  // in 5, out 3: windows [0, 2), [1, 4), [3, 5), overlapping as LibTorch's do.
  const auto five = torch::arange(1, 6, torch::kFloat32).unsqueeze(0);
  CHECK(torch::equal(five.matmul(adaptive_pool_matrix(5, 3)), torch::tensor({{1.5F, 3.0F, 4.5F}})));
  const auto x = torch::randn({4, 1280}, torch::Generator(at::detail::createCPUGenerator(3)));
  for (const auto& [in, out] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{1280, 512}, {1024, 512}, {100, 512}, {7, 7}, {512, 1}}) {
    const auto features = x.narrow(1, 0, in);
    const auto expected = torch::adaptive_avg_pool1d(features.unsqueeze(1), {out}).squeeze(1);
    CHECK(torch::allclose(features.matmul(adaptive_pool_matrix(in, out)), expected, 1e-6, 1e-6));
  }
}

TEST_CASE("fedau-cnn starts as FedAU's code does: Kaiming-normal feature layers, zero biases", "[models]") {
  const auto model = make_model("fedau-cnn", {1, 28, 28}, 10, 5);
  std::map<std::string, torch::Tensor> p;
  for (const auto& t : state_of(*model)) p[t.name] = t.value.to(torch::kFloat64);
  // std sqrt(2 / fan_in): conv1 9 inputs (288 draws), conv2 288 (9,216), fc 1,568 (200,704).
  const std::map<std::string, std::pair<double, double>> layers = {
      {"conv1", {9.0, 0.15}}, {"conv2", {288.0, 0.03}}, {"fc", {1568.0, 0.01}}};
  for (const auto& [name, fan] : layers) {
    const auto& w = p.at(name + ".weight");
    CHECK(w.std().item<double>() == Approx(std::sqrt(2.0 / fan.first)).epsilon(fan.second));
    CHECK(std::abs(w.mean().item<double>()) < 3.0 * std::sqrt(2.0 / fan.first / w.numel()) + 1e-12);
    CHECK(p.at(name + ".bias").abs().max().item<double>() == 0.0);
  }
  // The head keeps the default U(-1/sqrt(128), 1/sqrt(128)), biases included.
  CHECK(p.at("head.weight").abs().max().item<double>() <= 1.0 / std::sqrt(128.0));
  CHECK(p.at("head.bias").abs().max().item<double>() > 0.0);
  // Another architecture keeps the default everywhere.
  for (const auto& t : state_of(*make_model("small-cnn", {1, 28, 28}, 10, 5)))
    if (t.name == "conv1.bias") CHECK(t.value.abs().max().item<double>() > 0.0);
}
