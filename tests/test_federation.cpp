#include "catch_torch.hpp"
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "actors/federation.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/scenario/scenario.hpp"

using namespace drift;
namespace fs = std::filesystem;

namespace {

const char* kSmall = R"(
name = "small"
seed = 11
[data]
max_train_samples = 3000
max_test_samples = 1000
[partition]
scheme = "dirichlet"
alpha = 0.5
[federation]
clients = 6
rounds = 3
[sampler]
clients_per_round = 3
[training]
batch_size = 32
lr = 0.05
momentum = 0.9
[evaluation]
chunk_size = 300
)";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path fresh_directory(const std::string& tag) {
  static int counter = 0;
  auto p = fs::temp_directory_path() / ("drift-test-" + std::to_string(getpid()) + "-" + tag + "-" + std::to_string(counter++));
  fs::remove_all(p);
  return p;
}

struct RunFiles {
  fs::path dir;
  std::string metrics, clients;
};

RunFiles run_scenario(Scenario loaded, std::uint32_t slots, const std::string& tag) {
  auto scenario = std::make_shared<Scenario>(std::move(loaded));
  auto data = std::make_shared<const FederationData>(prepare_federation_data(*scenario));
  const auto dir = fresh_directory(tag);
  auto directory = std::make_shared<RunDirectory>(dir, *scenario, *data);
  actors::run_federation(scenario, data, directory, std::make_shared<actors::RunObserver>(),
                         actors::FederationOptions{slots, {}, {}});
  return {dir, read_file(dir / "metrics.jsonl"), read_file(dir / "clients.csv")};
}

RunFiles run(const std::vector<Override>& overrides, std::uint32_t slots, const std::string& tag) {
  return run_scenario(parse_scenario(kSmall, "small.toml", overrides), slots, tag);
}

// One of the shipped scenarios, shrunk to a slice of the data.
RunFiles run_shipped(const std::string& name, std::vector<Override> overrides, std::uint32_t slots, const std::string& tag) {
  overrides.insert(overrides.begin(), {{"data.max_train_samples", "4000"}, {"data.max_test_samples", "500"}});
  return run_scenario(load_scenario(std::string(DRIFT_SOURCE_DIR) + "/scenarios/" + name + ".toml", overrides), slots, tag);
}

// Rows of clients.csv as (round, client, event).
std::vector<std::tuple<int, int, std::string>> events_of(const std::string& csv) {
  std::vector<std::tuple<int, int, std::string>> out;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string round, client, event;
    std::getline(fields, round, ',');
    std::getline(fields, client, ',');
    std::getline(fields, event, ',');
    out.emplace_back(std::stoi(round), std::stoi(client), event);
  }
  return out;
}

std::vector<nlohmann::json> lines_of(const std::string& jsonl) {
  std::vector<nlohmann::json> out;
  std::istringstream in(jsonl);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("a 3-round federation runs through the actors and writes the run directory", "[federation]") {
  const auto r = run({}, 2, "basic");
  for (const char* f : {"scenario.toml", "metrics.jsonl", "clients.csv", "timings.jsonl", "partition.json", "summary.json",
                        "participation.csv"})
    CHECK(fs::exists(r.dir / f));
  // 3 rounds x 3 aggregated clients = 9 aggregations spread over the clients.
  std::uint64_t aggregated = 0;
  std::istringstream participation(read_file(r.dir / "participation.csv"));
  std::string line;
  std::getline(participation, line);
  while (std::getline(participation, line)) {
    std::istringstream fields(line);
    std::string v;
    for (int i = 0; i < 3; ++i) std::getline(fields, v, ',');
    aggregated += std::stoull(v);
  }
  CHECK(aggregated == 9);
  const auto rounds = lines_of(r.metrics);
  REQUIRE(rounds.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(rounds[i]["round"] == i + 1);
    CHECK(rounds[i]["model_version"] == i + 1);
    CHECK(rounds[i]["cohort"].size() == 3);
    CHECK(rounds[i]["num_updates"] == 3);
    CHECK(rounds[i]["bytes_up"].get<std::uint64_t>() > 3 * 4 * 80000);  // three small-cnn models
    CHECK(rounds[i]["per_class_accuracy"].size() == 10);
  }
  // Three short rounds on 3000 samples already beat chance (10 %) by far.
  CHECK(rounds.back()["test_accuracy"].get<double>() > 0.4);
  // Wall-clock time lives in timings.jsonl only.
  CHECK(r.metrics.find("train_seconds") == std::string::npos);
  CHECK(r.metrics.find("eval_seconds") == std::string::npos);

  const auto summary = nlohmann::json::parse(read_file(r.dir / "summary.json"));
  CHECK(summary["status"] == "completed");
  CHECK(summary["best_accuracy"].get<double>() >= rounds.back()["test_accuracy"].get<double>());
  // The header, then per round: 6 eligible, 3 selected and 3 finished rows.
  CHECK(std::count(r.clients.begin(), r.clients.end(), '\n') == 1 + 3 * (6 + 3 + 3));
  fs::remove_all(r.dir);
}

TEST_CASE("the same scenario and seed give byte-identical results on 1 and 2 slots and on reruns", "[federation][determinism]") {
  const auto a = run({}, 1, "one-slot");
  const auto b = run({}, 2, "two-slots");
  const auto c = run({}, 2, "rerun");
  CHECK(a.metrics == b.metrics);
  CHECK(b.metrics == c.metrics);
  CHECK(a.clients == b.clients);
  const auto other_seed = run({{"seed", "12"}}, 2, "other-seed");
  CHECK(other_seed.metrics != a.metrics);
  for (const auto& r : {a, b, c, other_seed}) fs::remove_all(r.dir);
}

TEST_CASE("algorithms with client state, extra models or clustering are byte-identical on 1 and 2 slots",
          "[federation][determinism]") {
  // MOON keeps a model per client, FedNH updates prototypes, FedRCL reads per-stage features and
  // FedCCL runs FINCH on both sides: none of it may depend on which slot ran a job.
  for (const std::string name : {"moon", "fednh", "fedrcl", "fedccl"}) {
    INFO(name);
    const std::vector<Override> overrides = {{"algorithm.name", name},      {"federation.rounds", "2"},
                                             {"data.max_train_samples", "1200"}, {"data.max_test_samples", "300"},
                                             {"training.grad_clip", "10"}};
    const auto one = run(overrides, 1, "state-one-" + name);
    const auto two = run(overrides, 2, "state-two-" + name);
    CHECK(one.metrics == two.metrics);
    CHECK(one.clients == two.clients);
    for (const auto& r : {one, two}) fs::remove_all(r.dir);
  }
}

TEST_CASE("a failing training job fails that client, not the run", "[federation]") {
  // A learning rate this large sends the loss to inf/nan within the first steps.
  const auto r = run({{"training.lr", "1e12"}, {"federation.rounds", "2"}}, 2, "diverge");
  const auto rounds = lines_of(r.metrics);
  REQUIRE(rounds.size() == 2);
  CHECK(r.clients.find("failed") != std::string::npos);
  CHECK(r.clients.find("training loss became") != std::string::npos);
  fs::remove_all(r.dir);
}

TEST_CASE("asynchronous and deadline-driven runs are byte-identical on 1 and 2 slots", "[federation][determinism]") {
  const std::vector<std::pair<std::string, std::vector<Override>>> cases = {
      {"async_fedasync", {{"federation.rounds", "12"}, {"evaluation.every", "6"}}},
      {"async_fedbuff", {{"federation.rounds", "4"}, {"evaluation.every", "2"}}},
      {"stragglers_deadline", {{"federation.rounds", "3"}, {"simulation.deadline", "3.0"}}},
  };
  for (const auto& [name, overrides] : cases) {
    const auto one = run_shipped(name, overrides, 1, name + "-1");
    const auto two = run_shipped(name, overrides, 2, name + "-2");
    INFO(name);
    CHECK(one.metrics == two.metrics);
    CHECK(one.clients == two.clients);
    CHECK(!one.metrics.empty());
    fs::remove_all(one.dir);
    fs::remove_all(two.dir);
  }
}

TEST_CASE("the cyclic sampler drifts the cohort far more than the uniform one", "[federation][drift]") {
  auto mean_tv = [](const std::string& metrics) {
    double sum = 0;
    int n = 0;
    for (const auto& r : lines_of(metrics))
      if (r["cohort_tv"].is_number()) {
        sum += r["cohort_tv"].get<double>();
        ++n;
      }
    REQUIRE(n >= 6);
    return sum / n;
  };
  const std::vector<Override> common = {{"federation.rounds", "10"}, {"evaluation.every", "10"}};
  auto cyclic_overrides = common, uniform_overrides = common;
  cyclic_overrides.push_back({"sampler.name", "cyclic"});
  cyclic_overrides.push_back({"sampler.strata", "labels"});
  uniform_overrides.push_back({"sampler.name", "uniform"});
  const auto cyclic = run_shipped("sampling_drift_diurnal", cyclic_overrides, 2, "cyclic");
  const auto uniform = run_shipped("sampling_drift_diurnal", uniform_overrides, 2, "uniform");
  const double c = mean_tv(cyclic.metrics), u = mean_tv(uniform.metrics);
  INFO("mean cohort TV: cyclic " << c << ", uniform " << u);
  CHECK(c > u + 0.1);
  CHECK(c > 1.5 * u);
  fs::remove_all(cyclic.dir);
  fs::remove_all(uniform.dir);
}

TEST_CASE("a timeline event that takes a group offline changes who is selected from that round on", "[federation][timeline]") {
  const std::string text = std::string(kSmall) + R"(
[groups.night]
rule = "id_range"
from = 0
to = 2
[[timeline]]
at_round = 3
action = "offline"
group = "night"
)";
  auto scenario = parse_scenario(text, "timeline.toml",
                                 {{"federation.rounds", "5"}, {"sampler.name", "availability_aware"}, {"evaluation.every", "5"}});
  const auto r = run_scenario(scenario, 2, "timeline");
  int night_before = 0, night_after = 0, selected_after = 0;
  for (const auto& [round, client, event] : events_of(r.clients)) {
    if (event != "selected") continue;
    if (round < 3) night_before += client <= 2;
    else {
      night_after += client <= 2;
      ++selected_after;
    }
  }
  CHECK(night_before > 0);
  CHECK(night_after == 0);
  CHECK(selected_after == 3 * 3);
  fs::remove_all(r.dir);
}

TEST_CASE("every algorithm trains through the actors", "[federation][algorithms]") {
  // With 200 samples per client and 2 rounds, MOON's projection head (two more layers) and
  // FedRCL's tau 0.05 (20x gradients on three feature levels) are still at chance; gentler
  // settings keep this a check of the plumbing. Their defaults are unit-tested.
  const std::map<std::string, std::vector<Override>> gentler = {
      {"moon", {{"algorithm.projection_dim", "0"}}}, {"fedrcl", {{"algorithm.tau", "0.5"}}}};
  for (const auto& name : algorithm_names()) {
    INFO(name);
    std::vector<Override> overrides = {{"algorithm.name", name}, {"federation.rounds", "2"},
                                       {"data.max_train_samples", "1200"}, {"data.max_test_samples", "300"}};
    if (auto it = gentler.find(name); it != gentler.end()) overrides.insert(overrides.end(), it->second.begin(), it->second.end());
    // Private-model algorithms run HtFLlib's protocol (lr 0.01, no momentum): FedKTL's mu = 50
    // latent regression and FedDistill's logit MSE diverge at this test's lr 0.05, momentum 0.9.
    if (find_algorithm(name)->private_models)
      overrides.insert(overrides.end(), {{"data.client_test_fraction", "0.25"}, {"training.lr", "0.01"}, {"training.momentum", "0"}});
    const auto r = run(overrides, 2, "algo-" + name);
    const auto rounds = lines_of(r.metrics);
    REQUIRE(rounds.size() == 2);
    CHECK(rounds[1]["num_updates"] == 3);
    CHECK(rounds[1]["test_accuracy"].get<double>() > 0.15);  // learned something beyond chance
    fs::remove_all(r.dir);
  }
}

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
    CHECK(std::stoull(f[7]) < 20000);  // bytes_up
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
