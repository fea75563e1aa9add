#include "catch_torch.hpp"

#include "engine/metrics/comparison.hpp"

using namespace drift;

TEST_CASE("comparison table: mean and sample std over seeds, rounds-to over the seeds that got there",
          "[metrics][compare]") {
  const auto ms = mean_std({0.80, 0.82, 0.87});
  CHECK(ms.mean == Approx(0.83));
  CHECK(ms.std == Approx(0.036055513));  // sqrt(((-0.03)^2 + (-0.01)^2 + 0.04^2) / 2)
  CHECK(mean_std({0.5}).std == 0.0);

  ComparisonRow row{"fedskc:reference", {}};
  row.seeds.push_back({1, 0.80, 0.78, {3.0, 10.0, std::nullopt}, 2e6, {}});
  row.seeds.push_back({2, 0.82, 0.80, {5.0, std::nullopt, std::nullopt}, 2e6, {}});
  row.seeds.push_back({3, 0.87, 0.85, {4.0, 12.0, 30.0}, 2e6, {}});
  const auto md = comparison_markdown({row}, {0.5, 0.7, 0.8});
  CHECK_THAT(md, Catch::Contains(
                     "| fedskc:reference | 3 | 83.00 ± 3.61 | 81.00 ± 3.61 | 4.0 | 11.0 (2/3) | 30.0 (1/3) | 2.000 |"));
  const auto csv = comparison_csv({row}, {0.5, 0.7, 0.8});
  CHECK_THAT(csv,
             Catch::Contains(
                 "\"fedskc:reference\",3,0.830000,0.036056,0.810000,0.036056,4.000,3,11.000,2,30.000,1,2000000.0"));
  ComparisonRow never{"fedavg", {{1, 0.4, 0.4, {std::nullopt, std::nullopt, std::nullopt}, 1e6, {}}}};
  CHECK_THAT(comparison_markdown({never}, {0.5, 0.7, 0.8}),
             Catch::Contains("| fedavg | 1 | 40.00 ± 0.00 | 40.00 ± 0.00 | – | – | – | 1.000 |"));
}

TEST_CASE("comparison table: last-5 accuracy per domain and their mean for multi-domain runs", "[metrics][compare]") {
  ComparisonRow row{"fedccl", {}};
  row.seeds.push_back({1, 0.8, 0.7, {}, 1e6, {0.9, 0.5}});
  row.seeds.push_back({2, 0.8, 0.7, {}, 1e6, {0.7, 0.5}});
  const auto md = comparison_markdown({row}, {}, {"mnist", "mnist-m"});
  CHECK_THAT(md, Catch::Contains("| algorithm | mnist | mnist-m | mean |"));
  // mnist 80 +- 14.14, mnist-m 50 +- 0, the mean over domains per seed: 70 and 60 -> 65 +- 7.07.
  CHECK_THAT(md, Catch::Contains("| fedccl | 80.00 ± 14.14 | 50.00 ± 0.00 | 65.00 ± 7.07 |"));
  const auto csv = comparison_csv({row}, {}, {"mnist", "mnist-m"});
  CHECK_THAT(csv, Catch::Contains("last5_mnist_mean,last5_mnist_std,last5_mnist-m_mean"));
  CHECK_THAT(csv, Catch::Contains(",0.800000,0.141421,0.500000,0.000000,0.650000,0.070711"));
  CHECK_THAT(comparison_markdown({row}, {}), !Catch::Contains("per domain"));
}
