#include "run_helpers.hpp"

#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "actors/federation.hpp"
#include "engine/compose/federation_data.hpp"
#include "engine/compose/run_directory.hpp"

namespace fs = std::filesystem;

namespace drift::test {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path fresh_directory(const std::string& tag) {
  static int counter = 0;
  auto p = fs::temp_directory_path() /
           ("drift-test-" + std::to_string(getpid()) + "-" + tag + "-" + std::to_string(counter++));
  fs::remove_all(p);
  return p;
}

RunFiles run_scenario(Scenario loaded, std::uint32_t slots, const std::string& tag) {
  auto scenario = std::make_shared<Scenario>(std::move(loaded));
  auto data = std::make_shared<const FederationData>(prepare_federation_data(*scenario));
  const auto dir = fresh_directory(tag);
  auto directory = std::make_shared<RunDirectory>(dir, *scenario, *data);
  actors::run_federation(scenario, data, directory, std::make_shared<actors::RunObserver>(),
                         actors::FederationOptions{slots, {}, {}, {}});
  return {dir, read_file(dir / "metrics.jsonl"), read_file(dir / "clients.csv")};
}

RunFiles run_shipped(const std::string& name, std::vector<Override> overrides, std::uint32_t slots,
                     const std::string& tag) {
  overrides.insert(overrides.begin(), {{"data.max_train_samples", "4000"}, {"data.max_test_samples", "500"}});
  return run_scenario(load_scenario(std::string(DRIFT_SOURCE_DIR) + "/scenarios/" + name + ".toml", overrides), slots,
                      tag);
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

}  // namespace drift::test
