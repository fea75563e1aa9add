// Every member of the sampler, availability and partition catalogues, through the actors: its
// keys survive the resolved scenario, a tiny run completes, the same on 1 and 2 slots. A member
// added to a catalogue is tested here without a test written for it (the algorithms have
// test_federation_async.cpp's walks).
#include "catch_torch.hpp"

#include <fstream>
#include <sstream>

#include "engine/compose/loader.hpp"
#include "engine/data/partition.hpp"
#include "engine/population/availability.hpp"
#include "engine/sampling/sampler.hpp"
#include "run_helpers.hpp"

using namespace drift;
using namespace drift::test;

namespace {

const char* kWalkScenario = R"(
name = "tiny_walk"
seed = 5
[data]
max_train_samples = 400
max_test_samples = 100
[partition]
min_client_samples = 5
[federation]
clients = 10
rounds = 2
[sampler]
clients_per_round = 3
[training]
batch_size = 32
[evaluation]
chunk_size = 100
)";

// The fixture a member's file key reads (ParamSpec::digest_key marks the key), by family.
std::string fixture_file(const std::string& family) {
  const auto path = fresh_directory("walk-" + family);
  std::filesystem::create_directories(path);
  const auto file = path / (family == "partition" ? "lists.json" : "trace.csv");
  std::ofstream out(file);
  if (family == "partition") {  // ten clients, the 400 samples dealt in turn
    out << "[";
    for (int c = 0; c < 10; ++c) {
      out << (c ? "," : "") << "[";
      for (int i = c, first = 1; i < 400; i += 10, first = 0) out << (first ? "" : ",") << i;
      out << "]";
    }
    out << "]";
  } else {  // every client online throughout
    out << "client,start,end\n";
    for (int c = 0; c < 10; ++c) out << c << ",0,1000000\n";
  }
  return file.string();
}

// The overrides that give `params`' file keys a fixture of `family`.
std::vector<Override> with_file_fixtures(const std::vector<ParamSpec>& params, const std::string& section) {
  std::vector<Override> out;
  for (const auto& spec : params)
    if (!spec.digest_key.empty()) out.push_back({section + "." + spec.key, "\"" + fixture_file(section) + "\""});
  return out;
}

// A resolved scenario without its comments (the first names the file it was resolved from).
std::string without_comments(const std::string& toml) {
  std::istringstream in(toml);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind('#', 0) != 0) out += line + "\n";
  return out;
}

// A member runs the same on 1 and 2 slots, and its resolved scenario loads again to itself.
void check_catalogue_member(const std::string& what, const std::vector<Override>& overrides) {
  INFO(what);
  const auto loaded = parse_scenario(kWalkScenario, "tiny.toml", overrides);
  CHECK(without_comments(parse_scenario(loaded.resolved_toml, "resolved.toml").resolved_toml) ==
        without_comments(loaded.resolved_toml));
  const auto one = run_scenario(loaded, 1, what + "-1");
  const auto two = run_scenario(loaded, 2, what + "-2");
  CHECK(one.metrics == two.metrics);
  CHECK(one.clients == two.clients);
  const auto lines = lines_of(one.metrics);
  REQUIRE(lines.size() == 2);
  CHECK(lines.back().contains("test_accuracy"));
}

}  // namespace

TEST_CASE("every sampler runs, the same on 1 and 2 slots", "[catalogue]") {
  for (const auto& row : sampler_catalog()) {
    auto overrides = with_file_fixtures(row.params, "sampler");
    overrides.push_back({"sampler.name", "\"" + row.name + "\""});
    check_catalogue_member("sampler " + row.name, overrides);
  }
}

TEST_CASE("every availability model runs, the same on 1 and 2 slots", "[catalogue]") {
  for (const auto& row : availability_catalog()) {
    auto overrides = with_file_fixtures(row.params, "availability");
    overrides.push_back({"availability.model", "\"" + row.name + "\""});
    check_catalogue_member("availability model " + row.name, overrides);
  }
}

TEST_CASE("every partition scheme runs or is refused for its data, the same on 1 and 2 slots", "[catalogue]") {
  for (const auto& row : partition_catalog()) {
    auto overrides = with_file_fixtures(row.params, "partition");
    overrides.push_back({"partition.scheme", "\"" + row.name + "\""});
    // Domains and writers are the dataset's: the multi-domain suite, or a LEAF dataset whose
    // files a user downloads (refused here with the datasets that have them).
    if (row.source == PartitionSource::domains) overrides.push_back({"data.dataset", "\"digit5\""});
    if (row.source == PartitionSource::writers) {
      INFO("partition scheme " << row.name);
      CHECK_THROWS_WITH(parse_scenario(kWalkScenario, "tiny.toml", overrides), Catch::Contains("femnist"));
      continue;
    }
    check_catalogue_member("partition scheme " + row.name, overrides);
  }
}
