#include "catch_torch.hpp"

#include <cmath>

#include "engine/algorithms/finch.hpp"

using namespace drift;
using Labels = std::vector<std::int64_t>;

namespace {

torch::Tensor at_degrees(const std::vector<double>& degrees) {
  auto t = torch::empty({static_cast<std::int64_t>(degrees.size()), 2}, torch::kFloat64);
  for (std::size_t i = 0; i < degrees.size(); ++i) {
    t[i][0] = std::cos(degrees[i] * M_PI / 180.0);
    t[i][1] = std::sin(degrees[i] * M_PI / 180.0);
  }
  return t;
}

}  // namespace

TEST_CASE("FINCH finds the hierarchy of a known toy set", "[finch]") {
  // Four pairs 2 degrees apart; the pairs sit at 1, 11, 91 and 101 degrees; the two groups at
  // 6 and 96 degrees. First neighbours: the partner; then the nearest pair; then everything.
  const auto hierarchy = finch_hierarchy(at_degrees({0, 2, 10, 12, 90, 92, 100, 102}));
  REQUIRE(hierarchy.size() == 3);
  CHECK(hierarchy[0] == Labels{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(hierarchy[1] == Labels{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(hierarchy[2] == Labels{0, 0, 0, 0, 0, 0, 0, 0});
  // FedCCL takes the last partition with more than one cluster.
  CHECK(finch(at_degrees({0, 2, 10, 12, 90, 92, 100, 102})) == Labels{0, 0, 0, 0, 1, 1, 1, 1});
}

TEST_CASE("FINCH labels clusters by their lowest member, whatever the input order", "[finch]") {
  CHECK(finch(at_degrees({90, 0, 92, 2})) == Labels{0, 1, 0, 1});
  CHECK(finch(at_degrees({0, 5, 11, 90, 95})) == Labels{0, 0, 0, 1, 1});  // a chain: 11 links to 5, 5 to 0
}

TEST_CASE("FINCH on one and two points gives one cluster, bad input is refused", "[finch]") {
  CHECK(finch(at_degrees({30})) == Labels{0});
  CHECK(finch_hierarchy(at_degrees({30})).size() == 1);
  CHECK(finch(at_degrees({0, 170})) == Labels{0, 0});
  CHECK_THROWS(finch(torch::zeros({0, 3})));
}

TEST_CASE("cluster means average the members of each label", "[finch]") {
  auto points = torch::tensor({1.0, 0.0, 3.0, 0.0, 0.0, 2.0}, torch::kFloat64).reshape({3, 2});
  auto means = cluster_means(points, {0, 0, 1});
  CHECK(torch::allclose(means, torch::tensor({2.0, 0.0, 0.0, 2.0}, torch::kFloat64).reshape({2, 2})));
}
