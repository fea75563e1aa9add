#pragma once
// Running a federation through the actors into a scratch run directory, and reading back what
// it wrote: shared by the federation test files.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "engine/compose/loader.hpp"

namespace drift::test {

struct RunFiles {
  std::filesystem::path dir;
  std::string metrics, clients;
};

std::string read_file(const std::filesystem::path& p);
// A new, empty path under the temporary directory, unique to this process and call.
std::filesystem::path fresh_directory(const std::string& tag);
// Runs `loaded` on `slots` local trainer slots; returns its metrics.jsonl and clients.csv.
RunFiles run_scenario(Scenario loaded, std::uint32_t slots, const std::string& tag);
// One of the shipped scenarios, shrunk to a slice of the data.
RunFiles run_shipped(const std::string& name, std::vector<Override> overrides, std::uint32_t slots,
                     const std::string& tag);
// Rows of clients.csv as (round, client, event).
std::vector<std::tuple<int, int, std::string>> events_of(const std::string& csv);
std::vector<nlohmann::json> lines_of(const std::string& jsonl);

}  // namespace drift::test
