#include <catch2/catch.hpp>

#include "engine/metrics/comparison.hpp"

using namespace drift;

TEST_CASE("comparison table: mean and sample std over seeds, rounds-to over the seeds that got there", "[metrics][compare]") {
  const auto ms = mean_std({0.80, 0.82, 0.87});
  CHECK(ms.mean == Approx(0.83));
  CHECK(ms.std == Approx(0.036055513));  // sqrt(((-0.03)^2 + (-0.01)^2 + 0.04^2) / 2)
  CHECK(mean_std({0.5}).std == 0.0);

  ComparisonRow row{"fedskc:reference", {}};
  row.seeds.push_back({1, 0.80, 0.78, {3.0, 10.0, std::nullopt}, 2e6});
  row.seeds.push_back({2, 0.82, 0.80, {5.0, std::nullopt, std::nullopt}, 2e6});
  row.seeds.push_back({3, 0.87, 0.85, {4.0, 12.0, 30.0}, 2e6});
  const auto md = comparison_markdown({row}, {0.5, 0.7, 0.8});
  CHECK_THAT(md, Catch::Contains("| fedskc:reference | 3 | 83.00 ± 3.61 | 81.00 ± 3.61 | 4.0 | 11.0 (2/3) | 30.0 (1/3) | 2.000 |"));
  const auto csv = comparison_csv({row}, {0.5, 0.7, 0.8});
  CHECK_THAT(csv, Catch::Contains("\"fedskc:reference\",3,0.830000,0.036056,0.810000,0.036056,4.000,3,11.000,2,30.000,1,2000000.0"));
  ComparisonRow never{"fedavg", {{1, 0.4, 0.4, {std::nullopt, std::nullopt, std::nullopt}, 1e6}}};
  CHECK_THAT(comparison_markdown({never}, {0.5, 0.7, 0.8}), Catch::Contains("| fedavg | 1 | 40.00 ± 0.00 | 40.00 ± 0.00 | – | – | – | 1.000 |"));
}
