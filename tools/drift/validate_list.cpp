#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "catalogue_listing.hpp"
#include "commands.hpp"
#include "edge_description.hpp"
#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/client_models.hpp"
#include "engine/compose/federation_data.hpp"
#include "engine/compose/packing.hpp"
#include "engine/compose/plugins.hpp"
#include "engine/compose/privacy_summary.hpp"
#include "engine/compose/schema.hpp"
#include "engine/config/suggest.hpp"
#include "engine/core/durations.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/partition.hpp"
#include "engine/models/model.hpp"
#include "engine/population/availability.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/sim/round_estimate.hpp"
#include "key_text.hpp"
#include "wall_estimate.hpp"

namespace drift::cli {
namespace {

std::string step_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f ms", seconds * 1e3);
  return text;
}

// What the algorithm's server half keeps per client and where: with [hierarchy], the edge with
// the most clients (each edge has a server half of its own).
void print_server_memory(const Scenario& scenario, const FederationData& data, const NamedTensors& shared) {
  const auto* info = find_algorithm(scenario.algorithm);
  if (!info || !info->memory) return;
  auto shape = federation_shape(scenario, data, &shared);
  std::string where;
  if (scenario.hierarchy.enabled()) {
    auto largest = edge_shape(shape, scenario, *data.population, 0);
    for (std::uint32_t e = 1; e < scenario.hierarchy.edges; ++e)
      if (auto s = edge_shape(shape, scenario, *data.population, e); s.num_clients > largest.num_clients)
        largest = std::move(s);
    shape = std::move(largest);
    where = "at the largest edge, ";
  }
  if (const auto text = info->memory(scenario.algorithm_params, shape); !text.empty())
    std::cout << "  memory: " << where << text << "\n";
}

}  // namespace

int validate_command(const ValidateArgs& args) {
  const auto scenario = load_scenario(args.scenario, parse_overrides(args.sets), args.plugins);
  if (args.print && args.no_data) {
    std::cout << scenario.resolved_toml;
    return 0;
  }
  if (args.no_data) {
    std::cout << args.scenario << ": ok (the scenario; its data was not read)\n";
    for (const auto& w : scenario.warnings) std::cout << "  warning: " << w << "\n";
    return 0;
  }
  const auto data = prepare_federation_data(scenario);
  if (args.print) {
    std::cout << scenario.resolved_toml;
    return 0;
  }
  std::size_t smallest = SIZE_MAX, largest = 0;
  for (const auto& c : data.partition.indices) {
    smallest = std::min(smallest, c.size());
    largest = std::max(largest, c.size());
  }
  const auto& sim = scenario.simulation;
  std::cout << args.scenario << ": ok\n"
            << "  " << scenario.clients << " clients holding " << smallest << " to " << largest << " samples ("
            << scenario.partition.scheme << " partition), " << data.population->group_names.size() << " group(s)\n";
  if (sim.mode == SimulationMode::sync) {
    std::cout << "  sync: " << cohort_description(scenario) << " (" << scenario.sampler.name << " sampler), "
              << scenario.rounds << " rounds";
    if (sim.deadline > 0) std::cout << ", deadline " << sim.deadline << " s";
    std::cout << "\n";
  } else {
    std::cout << "  " << name_of(sim.mode) << ": " << scenario.async.concurrency << " clients training at once ("
              << scenario.sampler.name << " sampler), " << scenario.rounds << " aggregations\n";
  }
  for (const auto& line : edge_description(scenario, *data.population)) std::cout << "  " << line << "\n";
  std::cout << "  " << scenario.algorithm << " on " << scenario.model << ", " << scenario.data.dataset << "\n";
  if (const auto pack = effective_pack(scenario); pack > 1)
    std::cout << "  packs of " << pack << " clients train as one model (devices.pack)\n";
  if (const auto& held = data.population->held_out; !held.empty())
    std::cout << "  " << std::count(held.begin(), held.end(), 1) << " clients held out: never take part\n";
  if (scenario.evaluation.per_client > 0)
    std::cout << "  every client's held-out split scored every " << scenario.evaluation.per_client
              << " evaluation(s) and after the last round (evaluation.per_client)\n";
  if (const auto privacy = privacy_description(scenario); !privacy.empty()) std::cout << "  " << privacy << "\n";
  if (const auto secagg = secure_aggregation_description(scenario); !secagg.empty())
    std::cout << "  " << secagg << "\n";
  ClientModels model(scenario, data, torch::kCPU);
  const auto shared = state_of(model.shared_model());
  const auto bytes = bytes_of(shared);
  print_server_memory(scenario, data, shared);
  const auto estimate = estimate_rounds(scenario, *data.population, bytes);
  std::cout << "  virtual time: a client's task takes " << human_duration(estimate.task_median) << " (median) to "
            << human_duration(estimate.task_max) << "; "
            << (sim.mode == SimulationMode::sync ? "a round" : "an aggregation") << " about "
            << human_duration(estimate.round) << " (" << estimate.basis << "); the run about "
            << human_duration(estimate.run) << " of simulated time\n";
  // Virtual time is the simulated devices' clock, not how long drift takes: say that too.
  const auto wall = estimate_wall_time(scenario, data, model.shared_model(), estimate.round);
  if (wall.not_estimated.empty())
    std::cout << "  wall time: training takes about " << human_duration(wall.seconds) << " on this machine's "
              << wall.slots << " CPU slot(s) (a local step of the model took " << step_text(wall.step_seconds)
              << " here; evaluation and start-up come on top)\n";
  else
    std::cout << "  wall time: " << wall.not_estimated << "\n";
  for (const auto& w : scenario.warnings) std::cout << "  warning: " << w << "\n";
  for (const auto& w : virtual_time_warnings(scenario, estimate)) std::cout << "  warning: " << w << "\n";
  return 0;
}

int list_command() {
  auto section = [](const char* title) { std::cout << title << ":\n"; };
  // Wide enough for the longest catalogue name (availability_aware), so descriptions align.
  constexpr std::size_t column = 20;
  auto row = [](const std::string& name, const std::string& text) {
    std::cout << "  " << name << std::string(name.size() < column ? column - name.size() : 1, ' ') << text << "\n";
  };
  // A catalogue member's own keys, under its row.
  auto member_keys = [&](const std::vector<ParamSpec>& keys) {
    for (const auto& k : keys) row("", "  " + k.key + ": " + k.help + " (" + key_line(k, false) + ")");
  };
  // Marks in brackets after the description: " [packs] [dp]".
  for (const auto& family : catalogue_listing()) {
    section(family.short_title.c_str());
    for (const auto& m : family.members) {
      std::string text = m.description;
      for (const auto& mark : m.marks) text += " [" + mark + "]";
      row(m.name, text);
      for (const auto& [name, description] : m.presets) row("", "  preset " + name + ": " + description);
      member_keys(m.keys);
    }
  }
  if (!loaded_plugins().empty()) section("plugins");
  for (const auto& p : loaded_plugins()) {
    std::string added;
    for (const auto& a : p.added) added += (added.empty() ? "" : ", ") + a;
    row(p.path, "digest " + p.digest + ": " + (added.empty() ? "adds nothing" : added));
  }
  return 0;
}

void load_plugins(const std::vector<std::string>& paths) {
  // load_plugin refuses an empty path with its reason; absolute() would throw on it first.
  for (const auto& p : paths) load_plugin(p.empty() ? p : std::filesystem::absolute(p).lexically_normal().string());
}

}  // namespace drift::cli

namespace drift::cli {
namespace {

void print_keys(const std::string& title, const std::vector<ParamSpec>& keys) {
  std::cout << title << "\n";
  for (const auto& k : keys) std::cout << "  " << k.key << ": " << key_line(k) << "\n";
}

}  // namespace

int list_keys_command() {
  for (const auto& section : scenario_schema())
    print_keys(section.name.empty() ? "top level" : "[" + section.name + "]  " + section.help, section.keys);
  print_keys("[groups.NAME]  a named set of clients; [groups.NAME.profile] and .availability override those sections",
             group_schema());
  print_keys("[[timeline]]  something that happens at a round or a virtual time", timeline_schema());
  std::cout << "[algorithm], [sampler], [partition] and [availability] also take the chosen algorithm's, "
               "sampler's, scheme's and model's parameters: drift list\n"
            << "drift resume --set may change: " << join(resumable_keys()) << "\n";
  return 0;
}

}  // namespace drift::cli
