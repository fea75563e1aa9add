// Federations of private models and of several domains, through the actors.
#include <nlohmann/json.hpp>
#include "catch_torch.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/compose/loader.hpp"
#include "run_helpers.hpp"

using namespace drift;
using namespace drift::test;
namespace fs = std::filesystem;

TEST_CASE("FedKTL with three architectures: private models, nothing aggregated, accuracy per client",
          "[federation][fedktl]") {
  const char* text = R"(
name = "ktl"
seed = 3
[data]
max_train_samples = 1500
max_test_samples = 300
client_test_fraction = 0.25
[partition]
scheme = "dirichlet"
alpha = 0.5
[federation]
clients = 6
rounds = 3
[sampler]
clients_per_round = 3
[model]
group = "cnn4,resnet4,mobilenetv2"
width = 8
[algorithm]
name = "fedktl"
server_epochs = 5
[training]
batch_size = 10
lr = 0.01
grad_clip = 100
[simulation]
client_state = "disk"
)";
  const auto one = run_scenario(parse_scenario(text, "ktl.toml"), 1, "ktl-1");
  const auto two = run_scenario(parse_scenario(text, "ktl.toml"), 2, "ktl-2");
  CHECK(one.metrics == two.metrics);  // whatever the slots and the order jobs finish in
  CHECK(one.clients == two.clients);

  std::set<int> trained;
  for (const auto& round : lines_of(one.metrics)) {
    for (const auto& c : round["aggregated"]) trained.insert(c.get<int>());
    REQUIRE(round.contains("client_accuracy"));
    const auto& accuracy = round["client_accuracy"];
    REQUIRE(accuracy.size() == 6);
    int evaluated = 0;
    for (int c = 0; c < 6; ++c) {
      INFO("client " << c);
      CHECK(accuracy[c].is_null() == (trained.count(c) == 0));  // a number exactly for the clients trained so far
      if (!accuracy[c].is_null()) ++evaluated;
    }
    CHECK(round["clients_evaluated"] == evaluated);
    CHECK(round["test_accuracy"].get<double>() > 0.0);
  }
  // No weights travel: every upload is prototypes only (cnn4 alone holds 2.3 MB of weights).
  std::istringstream csv(one.clients);
  std::string line;
  std::getline(csv, line);
  int finished = 0;
  while (std::getline(csv, line)) {
    if (line.find(",finished,") == std::string::npos) continue;
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    CHECK(std::stoull(f[7]) < 20000);   // bytes_up
    CHECK(std::stoull(f[6]) < 200000);  // bytes_down: generated pairs, no model
    ++finished;
  }
  CHECK(finished == 9);
  // The private models waited on disk, one file per trained client, sized by architecture.
  std::map<std::string, std::set<std::uintmax_t>> sizes;
  for (int c : trained) {
    const auto f = one.dir / "client_state" / (std::to_string(c) + ".state");
    REQUIRE(fs::exists(f));
    sizes[c % 3 == 0 ? "cnn4" : c % 3 == 1 ? "resnet4" : "mobilenetv2"].insert(fs::file_size(f));
  }
  std::set<std::uintmax_t> distinct;
  for (const auto& [arch, s] : sizes) distinct.insert(*s.begin());
  CHECK(distinct.size() == sizes.size());
  fs::remove_all(one.dir);
  fs::remove_all(two.dir);
}

TEST_CASE("the digit-domain suite: one domain per client, accuracy per domain", "[federation][digits]") {
  const char* text = R"(
name = "digits"
seed = 2
[data]
dataset = "digit5"
max_train_samples = 1000
max_test_samples = 250
[partition]
scheme = "domains"
[federation]
clients = 5
rounds = 2
[sampler]
clients_per_round = 5
[training]
batch_size = 32
lr = 0.05
[evaluation]
chunk_size = 30
)";
  const auto one = run_scenario(parse_scenario(text, "digits.toml"), 1, "digits-1");
  const auto two = run_scenario(parse_scenario(text, "digits.toml"), 2, "digits-2");
  CHECK(one.metrics == two.metrics);
  for (const auto& round : lines_of(one.metrics)) {
    REQUIRE(round["domain_accuracy"].size() == 5);
    double sum = 0.0;
    for (const auto& a : round["domain_accuracy"]) sum += a.get<double>();
    CHECK(round["domain_mean_accuracy"].get<double>() == Approx(sum / 5));
    // 50 test samples per domain: the overall accuracy is the mean over domains.
    CHECK(round["test_accuracy"].get<double>() == Approx(sum / 5));
  }
  // Every client trained on 200 samples of its own domain (client k: domain k).
  const auto partition = nlohmann::json::parse(read_file(one.dir / "partition.json"));
  for (const auto& c : partition["clients"]) {
    CHECK(c["num_samples"] == 200);
    // A capped domain is a slice of a fixed shuffle, not the first classes of a class-sorted source.
    int classes = 0;
    for (const auto& n : c["class_histogram"]) classes += n.get<int>() > 0;
    CHECK(classes >= 8);
  }
  fs::remove_all(one.dir);
  fs::remove_all(two.dir);
}
