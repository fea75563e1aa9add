// The data conventions of the papers' protocol families (docs/algorithms.md#conventions): the long-tailed
// pool, CReFF's chunked Dirichlet, FedAU's slices, partitions read from files, per-client held-out splits.
#include "catch_torch.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "engine/compose/federation_data.hpp"
#include "engine/compose/loader.hpp"
#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/data/partition.hpp"

using namespace drift;
namespace fs = std::filesystem;

namespace {

std::vector<std::int64_t> balanced_labels(std::int64_t per_class, std::int64_t classes) {
  std::vector<std::int64_t> labels;
  for (std::int64_t i = 0; i < per_class * classes; ++i) labels.push_back(i % classes);
  return labels;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = fs::temp_directory_path() / ("drift-test-" + name);
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST_CASE("long-tail pool keeps floor(n_max * rho^(-c/(C-1))) samples of class c", "[partition][long_tail]") {
  const auto labels = balanced_labels(100, 10);
  Rng rng(3);
  const auto pool = long_tail_pool(labels, 10, 100.0, rng);
  std::vector<std::int64_t> count(10, 0);
  for (auto i : pool) ++count[static_cast<std::size_t>(labels[static_cast<std::size_t>(i)])];
  // n_max = 100: class 0 keeps 100, class 1 floor(100 * 0.01^(1/9)) = 59, class 9 keeps 1.
  for (std::int64_t c = 0; c < 10; ++c)
    CHECK(count[static_cast<std::size_t>(c)] == static_cast<std::int64_t>(std::floor(100.0 * std::pow(0.01, c / 9.0))));
  CHECK(count[1] == 59);
  CHECK(count[9] == 1);
  CHECK(std::is_sorted(pool.begin(), pool.end()));
  CHECK(std::set<std::int64_t>(pool.begin(), pool.end()).size() == pool.size());
}

TEST_CASE("partitions with a long tail hold only pool samples", "[partition][long_tail]") {
  const auto labels = balanced_labels(100, 10);
  PartitionConfig config;
  config.scheme = "iid";
  config.long_tail = 10.0;
  const auto p = make_partition(config, labels, 10, 5, 7);
  Rng tail = make_stream(7, "long-tail");
  const auto pool = long_tail_pool(labels, 10, 10.0, tail);
  std::set<std::int64_t> held;
  for (const auto& c : p.indices) held.insert(c.begin(), c.end());
  CHECK(held == std::set<std::int64_t>(pool.begin(), pool.end()));
  // rho = 1 leaves the partition exactly as it was.
  config.long_tail = 1.0;
  PartitionConfig plain;
  plain.scheme = "iid";
  CHECK(make_partition(config, labels, 10, 5, 7).indices == make_partition(plain, labels, 10, 5, 7).indices);
}

TEST_CASE("CReFF partition: equal client sizes, every sample once, label skew kept", "[partition][creff]") {
  const auto labels = balanced_labels(200, 10);  // 2,000 samples
  Rng rng(5);
  const auto p = partition_dirichlet_creff(labels, 10, 20, 0.05, 1000, rng);
  REQUIRE(p.num_clients() == 20);
  std::set<std::int64_t> all;
  double dominant = 0.0;
  for (const auto& client : p.indices) {
    CHECK(client.size() == 100);
    all.insert(client.begin(), client.end());
    std::vector<int> count(10, 0);
    for (auto i : client) ++count[static_cast<std::size_t>(labels[static_cast<std::size_t>(i)])];
    dominant += *std::max_element(count.begin(), count.end()) / 100.0;
  }
  CHECK(all.size() == 2000);
  CHECK(dominant / 20.0 > 0.5);  // IID would give about 0.15
  Rng again(5);
  CHECK(partition_dirichlet_creff(labels, 10, 20, 0.05, 1000, again).indices == p.indices);
  Rng other(5);
  CHECK_THROWS_AS(partition_dirichlet_creff(labels, 10, 9, 0.05, 1000, other), UserError);
}

TEST_CASE("FedAU's slices: each class cut in dataset order by the rows, ends rounded half to even",
          "[partition][slices]") {
  // Class 0 at 0,2,3,5,8,9 (6 samples), class 1 at 1,4,6,7 (4). Class 0's ends: 6 * 0.5 = 3,
  // 6 * 0.75 = 4.5 -> 4 (half to even), 6; class 1's: 4 * 0.5 = 2, 2 (an empty slice), 4.
  const std::vector<std::int64_t> labels{0, 1, 0, 0, 1, 0, 1, 1, 0, 0};
  const std::vector<std::vector<double>> rows{{0.5, 0.5}, {0.25, 0.0}, {0.25, 0.5}};
  const auto p = slices_by_label_rows(labels, 2, rows);
  REQUIRE(p.num_clients() == 3);
  CHECK(p.indices[0] == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  CHECK(p.indices[1] == std::vector<std::int64_t>{5});
  CHECK(p.indices[2] == std::vector<std::int64_t>{6, 7, 8, 9});
  // 5 samples of class 0 by rows 0.5 / 0.5: 2.5 -> 2, not 3.
  const auto halves = slices_by_label_rows({0, 0, 0, 0, 0}, 1, {{0.5}, {0.5}});
  CHECK(halves.indices[0] == std::vector<std::int64_t>{0, 1});

  const auto many = balanced_labels(300, 10);  // 3,000 samples
  Rng rng(3);
  const auto drawn = partition_dirichlet_slices(many, 10, 25, 0.1, 5, 1000, rng);
  std::set<std::int64_t> all;
  std::size_t smallest = many.size(), largest = 0;
  for (const auto& client : drawn.indices) {
    all.insert(client.begin(), client.end());
    smallest = std::min(smallest, client.size());
    largest = std::max(largest, client.size());
  }
  CHECK(all.size() == many.size());  // every sample once
  CHECK(smallest >= 5);
  CHECK(largest > 2 * smallest);  // sizes follow the rows, unlike CReFF's equal clients
  Rng again(3);
  CHECK(partition_dirichlet_slices(many, 10, 25, 0.1, 5, 1000, again).indices == drawn.indices);
  Rng other(3);
  CHECK_THROWS_AS(partition_dirichlet_slices(many, 10, 25, 0.1, 200, 1000, other), UserError);  // 25 x 200 > 3,000
  CHECK_THROWS_AS(partition_dirichlet_slices(many, 10, 25, 0.1, 110, 20, other), UserError);    // no draw that even
}

TEST_CASE("a partition file is read and checked for count, range, duplicates and types", "[partition][file]") {
  const auto ok = partition_from_file(write_temp("p1.json", "[[3, 1], [0, 2, 4]]"), 5, 2);
  CHECK(ok.indices == std::vector<std::vector<std::int64_t>>{{1, 3}, {0, 2, 4}});
  const auto object = partition_from_file(write_temp("p2.json", R"({"clients": [{"indices": [0]}, [1]]})"), 5, 2);
  CHECK(object.indices == std::vector<std::vector<std::int64_t>>{{0}, {1}});

  auto fails = [](const std::string& text, std::uint32_t clients) {
    try {
      partition_from_file(write_temp("bad.json", text), 5, clients);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(fails("[[0], [1]]", 3), Catch::Contains("holds 2 clients but federation.clients is 3"));
  CHECK_THAT(fails("[[0], [5]]", 2), Catch::Contains("client 1: index 5 is outside the training set [0, 5)"));
  // Past int64: printed as written, not wrapped to a negative number.
  CHECK_THAT(fails("[[0], [9223372036854775808]]", 2),
             Catch::Contains("index 9223372036854775808 is outside the training set"));
  CHECK_THAT(fails("[[0, 2], [2]]", 2), Catch::Contains("client 1: index 2 is already held by client 0"));
  CHECK_THAT(fails("[[0, 0], [1]]", 2), Catch::Contains("already held by client itself"));
  CHECK_THAT(fails("[[0], [1.5]]", 2), Catch::Contains("'1.5' is not an integer index"));
  CHECK_THAT(fails("[[0], []]", 2), Catch::Contains("client 1 holds no samples"));
  CHECK_THAT(fails("[[0], [1]", 2), Catch::Contains("not valid JSON"));
  CHECK_THAT(fails(R"({"x": 1})", 2), Catch::Contains("expected a list"));
  CHECK_THROWS_WITH(partition_from_file("/nonexistent/p.json", 5, 2), Catch::Contains("cannot open"));
}

TEST_CASE("per-client held-out splits: ceil(f n) per client, in client order, disjoint from training",
          "[partition][holdout]") {
  auto train = std::make_shared<Dataset>();
  train->images = torch::arange(20, torch::kFloat32).reshape({20, 1, 1, 1});
  train->labels = torch::zeros({20}, torch::kInt64);
  train->num_classes = 1;
  DatasetSplits data{train, nullptr};
  Partition p;
  p.indices = {{0, 1, 2, 3, 4, 5, 6, 7}, {10, 11, 12, 13, 14}};
  const auto sizes = hold_out_client_tests(data, p, 0.25, 9);
  CHECK(sizes == std::vector<std::int64_t>{2, 2});  // ceil(2) and ceil(1.25)
  CHECK(p.indices[0].size() == 6);
  CHECK(p.indices[1].size() == 3);
  REQUIRE(data.test->size() == 4);
  const auto test_values = data.test->images.flatten();
  for (std::int64_t i = 0; i < 4; ++i) {
    const auto v = static_cast<std::int64_t>(test_values[i].item<float>());
    const auto& own = p.indices[i < 2 ? 0 : 1];
    CHECK(std::find(own.begin(), own.end(), v) == own.end());  // not also in training
    CHECK((i < 2 ? v < 8 : v >= 10));                          // client 0's part first
  }
  Partition tiny;
  tiny.indices = {{0}};
  CHECK_THROWS_WITH(hold_out_client_tests(data, tiny, 0.25, 9), Catch::Contains("leaves it none to train on"));
}

TEST_CASE("partition keys that do not fit together are refused at validation", "[partition][scenario]") {
  auto message = [](std::vector<Override> overrides) {
    try {
      parse_scenario("", "s.toml", overrides);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(message({{"partition.scheme", "file"}}), Catch::Contains("needs partition.file"));
  // Another scheme's key does nothing, with a warning that names the schemes taking it.
  const auto warnings =
      parse_scenario("", "s.toml", {{"partition.scheme", "shards"}, {"partition.alpha", "0.1"}}).warnings;
  REQUIRE_FALSE(warnings.empty());
  CHECK(warnings.front() ==
        "partition.alpha does nothing: partition.scheme = \"shards\" does not take it (dirichlet, dirichlet_creff, "
        "domains_dirichlet, dirichlet_slices do)");
  CHECK_THAT(message({{"partition.alpha", "0"}, {"partition.scheme", "iid"}}), Catch::Contains("must be > 0"));
  CHECK_THAT(message({{"partition.shards", "2"}}),
             Catch::Contains("unknown key 'partition.shards'") &&
                 Catch::Contains("this scheme's parameters are: alpha, min_client_samples, max_attempts"));
  CHECK_THAT(message({{"partition.scheme", "file"}, {"partition.file", "x.json"}, {"partition.long_tail", "10"}}),
             Catch::Contains("partition.long_tail does not apply to partition.scheme = \"file\" (the file fixes"));
  CHECK_THAT(message({{"partition.scheme", "dirichlet_creff"}, {"federation.clients", "5"}}),
             Catch::Contains("needs federation.clients >= 10"));
  CHECK_THAT(message({{"partition.long_tail", "0.5"}}), Catch::Contains("long_tail"));
  CHECK_THAT(message({{"data.client_test_fraction", "0.95"}}), Catch::Contains("client_test_fraction"));
  CHECK(message({{"partition.scheme", "dirichlet_creff"}, {"partition.long_tail", "10"}}) == "accepted");
}
