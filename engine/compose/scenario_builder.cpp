// A validated scenario table into the Scenario structs, with the checks that span sections
// (partition keys that conflict, private models and modes, device pools).
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/data_keys.hpp"
#include "engine/compose/input_files.hpp"
#include "engine/compose/member_keys.hpp"
#include "engine/compose/run_directory.hpp"
#include "engine/compose/scenario_table.hpp"
#include "engine/compose/schema.hpp"
#include "engine/compose/schema_hierarchy.hpp"
#include "engine/compose/simulation_checks.hpp"
#include "engine/compose/toml_writer.hpp"
#include "engine/compose/value_reader.hpp"
#include "engine/config/suggest.hpp"
#include "engine/core/error.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/partition.hpp"
#include "engine/models/model.hpp"
#include "engine/models/torchscript_model.hpp"
#include "engine/population/availability.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/sim/aggregation_stages.hpp"
#include "engine/sim/privacy_book.hpp"
#include "engine/training/devices.hpp"

namespace drift {
namespace {

// The value of a validated key (validation inserted every default).
ParamValue value_at(const toml::table& table, const ParamSpec& spec, const std::string& path) {
  return read_value(spec, path, *table.get(spec.key), path);
}

const toml::table& section_table(const toml::table& root, const std::string& name) {
  return name.empty() ? root : *root.at_path(name).as_table();
}

void read_algorithm_params(Scenario& s, const toml::table& root, const AlgorithmInfo& algorithm) {
  const auto& table = *root["algorithm"].as_table();
  const auto* preset = table["preset"].as_string();
  for (const auto& spec : algorithm_params(algorithm, preset ? preset->get() : ""))
    s.algorithm_params.set(spec.key, value_at(table, spec, "algorithm." + spec.key));
}

// [groups.NAME]: the rule's keys, and profile and availability overrides of the global ones.
void read_groups(Scenario& s, const toml::table& root) {
  const auto* groups = root["groups"].as_table();
  if (groups == nullptr) return;
  for (auto&& [k, node] : *groups) {
    const auto& t = *node.as_table();
    GroupConfig g;
    g.name = std::string(k.str());
    const std::string prefix = "groups." + g.name;
    store_keys(g, group_keys(), t, prefix);
    g.profile = s.profile;
    if (const auto* profile = t["profile"].as_table())
      store_keys(g.profile, profile_keys(), *profile, prefix + ".profile");
    g.availability = s.availability;
    if (const auto* availability = t["availability"].as_table()) {
      store_keys(g.availability, availability_keys(), *availability, prefix + ".availability");
      for (const auto& spec : availability_model(g.availability.model).params)
        if (availability->contains(spec.key))
          g.availability.params.set(spec.key, value_at(*availability, spec, prefix + ".availability." + spec.key));
    }
    s.groups.push_back(std::move(g));
  }
}

void read_timeline(Scenario& s, const toml::table& root) {
  const auto* timeline = root["timeline"].as_array();
  if (timeline == nullptr) return;
  for (std::size_t i = 0; i < timeline->size(); ++i) {
    TimelineEntry e;
    e.index = i + 1;
    store_keys(e, timeline_keys(), *timeline->get(i)->as_table(), "timeline[" + std::to_string(i + 1) + "]");
    s.timeline.push_back(std::move(e));
  }
}

// [model] group: only algorithms whose clients keep private models can mix architectures:
// weights of different shapes cannot be averaged.
void finish_model_group(Scenario& s, const AlgorithmInfo& algorithm, const std::string& source) {
  if (!s.model_group.empty()) s.model = s.model_group.front();
  std::vector<std::string> distinct = s.model_group;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (distinct.size() > 1 && !algorithm.private_models)
    throw UserError(source + ": model.group mixes architectures, but algorithm '" + s.algorithm +
                    "' averages weights; use an algorithm whose clients keep private models (drift list)");
  if (s.feature_dim == 0 && distinct.size() > 1) s.feature_dim = 512;  // FedKTL's d'
}

// A model read from model.file (a TorchScript module, an exported program): the file holds what
// the algorithm calls. Its digest goes into the resolved scenario, so a run, its resume and its
// workers all refuse another file.
void finish_file_model(Scenario& s, toml::table& root, const AlgorithmInfo& algorithm, const std::string& source) {
  const auto* architecture = file_architecture(s);
  if (architecture == nullptr) return;
  const auto& row = *find_model(*architecture);
  if (s.model_file.empty()) throw UserError(source + ": model \"" + row.name + "\" needs model.file, " + row.file_kind);
  ModelFileInfo info;
  try {
    info = row.inspect(s.model_file);
  } catch (const UserError& e) {
    throw UserError(source + ": " + e.what());
  }
  if (!s.model_digest.empty() && s.model_digest != info.digest)
    throw UserError(source + ": model.file " + s.model_file + " has digest " + info.digest +
                    ", but the scenario records model.digest = \"" + s.model_digest +
                    "\": the file changed since the scenario was resolved (or this machine holds another one)");
  ModelOptions options;
  if (algorithm.model_options) options = algorithm.model_options(s.algorithm_params);
  if (options.feature_levels)
    throw UserError(source + ": algorithm '" + s.algorithm + "' reads the pooled output of every stage, which " +
                    row.file_kind + " does not give; use a built-in architecture");
  options.script_backbone = algorithm.reads_features;
  options.feature_dim = s.feature_dim;
  if (script_backbone(options) && !info.has_features)
    throw UserError(source + ": algorithm '" + s.algorithm +
                    "' reads the model's features and puts its own head on them: " + row.features_how);
  const auto largest = std::max<std::int64_t>(s.training.batch_size, s.evaluation.batch_size);
  if (largest > info.batch_max)
    throw UserError(
        source + ": model.file " + s.model_file + " takes batches of up to " + std::to_string(info.batch_max) +
        " samples (its dynamic batch dimension), and the scenario feeds batches of " + std::to_string(largest) +
        " (training.batch_size, evaluation.batch_size): export it with a larger Dim(\"batch\", max=...) "
        "(docs/models.md#exporting)");
  if (info.batch_min > 1)
    throw UserError(source + ": model.file " + s.model_file + " takes batches of at least " +
                    std::to_string(info.batch_min) +
                    " samples (its dynamic batch dimension), and an epoch's last batch holds what is left, down to one "
                    "sample: export it with Dim(\"batch\") without a minimum (docs/models.md#exporting)");
  s.model_digest = info.digest;
  root["model"].as_table()->insert_or_assign("digest", info.digest);
}

// A Poisson sampler draws a sync round's whole cohort by its rate: the cohort's size is its
// to decide, not the scenario's. Its row's design says so, whatever its name.
void check_poisson_samplers(const Scenario& s, const std::string& source) {
  for (const auto& name : used_sampler_names(s)) {
    const auto* row = find_sampler(name);
    if (row == nullptr || row->design != SamplingDesign::poisson) continue;
    const std::string which = "sampler \"" + name + "\" (a Poisson design)";
    if (s.simulation.mode != SimulationMode::sync)
      throw UserError(source + ": " + which + " draws a sync round's cohort; under " + name_of(s.simulation.mode) +
                      " clients are drawn one at a time as slots free up");
    if (s.simulation.over_selection > 1.0)
      throw UserError(source + ": " + which +
                      " waits for every client it drew; simulation.over_selection (keep the first finishers of a "
                      "larger draw) would change who takes part by speed");
    for (const auto& e : s.timeline)
      if (e.action == TimelineAction::fraction)
        throw UserError(source + ": timeline[" + std::to_string(e.index) + "] changes the cohort fraction, but " +
                        which + " draws each client at the fixed rate sampler.fraction");
  }
}

// Combinations that are valid key by key but cannot run together.
void check_combinations(const Scenario& s, const AlgorithmInfo& algorithm, const std::string& source) {
  if (algorithm.private_models) {
    if (s.data.client_test_fraction <= 0.0 && partition_scheme(s.partition.scheme).source != PartitionSource::writers)
      throw UserError(source + ": algorithm '" + s.algorithm +
                      "' keeps private models, evaluated on each client's "
                      "own test split: set data.client_test_fraction (PFLlib: 0.25), or use natural clients");
  }
  const bool text = find_dataset(s.data.dataset)->text;
  for (const auto& name : s.model_group.empty() ? std::vector<std::string>{s.model} : s.model_group)
    if (!find_model(name)->any_input && find_model(name)->text != text)
      throw UserError(source + ": model '" + name + "' reads " + (text ? "images" : "token sequences") +
                      ", but dataset '" + s.data.dataset + "' holds " + (text ? "text: use char-lstm" : "images"));
  if (text && algorithm.needs_images)
    throw UserError(source + ": algorithm '" + s.algorithm + "' makes images on the server, but dataset '" +
                    s.data.dataset + "' holds text");
  if (s.simulation.mode != SimulationMode::sync && !algorithm.sync_only.empty())
    throw UserError(source + ": algorithm '" + s.algorithm +
                    "' runs in sync rounds only (simulation.mode = \"sync\"): " + algorithm.sync_only);
  if (s.simulation.mode != SimulationMode::sync && s.simulation.on_divergence == DivergencePolicy::keep_going &&
      s.simulation.max_virtual_time <= 0)
    throw UserError(source + ": simulation.on_divergence = \"continue\" under " + name_of(s.simulation.mode) +
                    " needs simulation.max_virtual_time: once every update fails, no aggregation ever comes, and "
                    "only a time limit ends the run");
  if (s.simulation.shadow_clients > 0 && s.simulation.mode != SimulationMode::sync)
    throw UserError(source +
                    ": simulation.shadow_clients measures a sync round's cohort against the population; "
                    "under " +
                    name_of(s.simulation.mode) + " there is no round cohort to compare");
  if (s.simulation.shadow_clients > 0 && algorithm.private_models)
    throw UserError(source + ": simulation.shadow_clients compares updates of one shared model; '" + s.algorithm +
                    "' keeps private models, which have no common update");
  check_poisson_samplers(s, source);
  check_partial_work(s, source);
  check_hierarchy(s, algorithm, source);
  check_per_client_evaluation(s, algorithm.private_models,
                              partition_scheme(s.partition.scheme).source == PartitionSource::writers, source);
  if (const auto why = refused_aggregation_stages(s, algorithm); !why.empty()) throw UserError(source + ": " + why);
  if (algorithm.check) {
    FederationShape shape;
    shape.num_clients = s.clients;
    shape.cohort = aggregated_per_round(s);
    const auto message = algorithm.check(s.algorithm_params, shape);
    if (!message.empty()) throw UserError(source + ": " + message);
  }
}

void check_devices_and_output(const Scenario& s, const std::string& source) {
  if (s.pack > 1 && s.simulation.mode != SimulationMode::sync)
    throw UserError(source + ": devices.pack needs simulation.mode = sync: " + name_of(s.simulation.mode) +
                    " starts each client on its own as virtual time reaches it, so no two start together");
  if (!s.device_pool.empty()) {
    if (s.cpu_slots != 0) throw UserError(source + ": set devices.cpu_slots or devices.pool, not both");
    try {
      require_devices(parse_device_pool(s.device_pool));
    } catch (const UserError& e) {
      throw UserError(source + ": devices.pool: " + e.what());
    }
  }
  check_output_path(s.runs_dir, source + ": output.runs_dir");
}

std::string resolved_text(const toml::table& root, const std::string& source) {
  std::ostringstream text;
  text << "# drift scenario, resolved from " << source << " with every default written out.\n"
       << "# `drift run` on this file repeats the run exactly.\n\n"
       << toml_text(root);
  return text.str();
}

}  // namespace

namespace {

// The run directory is runs_dir/<name>: a name must not be able to point anywhere else.
void check_run_name(const std::string& name, const std::string& source) {
  constexpr std::size_t kMaxName = 100;
  auto refuse = [&](const std::string& why) {
    throw UserError(source + ": name '" + name.substr(0, kMaxName) + (name.size() > kMaxName ? "...'" : "'") + " " +
                    why + " (it names the run directory under runs_dir)");
  };
  if (name.empty()) throw UserError(source + ": name is empty (it names the run directory under runs_dir)");
  if (name == "." || name == "..") refuse("is not a name");
  if (name.size() > kMaxName) refuse("is longer than " + std::to_string(kMaxName) + " bytes");
  for (unsigned char c : name) {
    if (c == '/' || c == '\\') refuse("contains a path separator");
    if (c < 0x20 || c == 0x7f) refuse("contains a control character");
  }
}

}  // namespace

Scenario build_scenario(toml::table& root, const std::string& source) {
  absolutise_input_paths(root, std::filesystem::path(source).parent_path());
  record_input_digests(root, source);
  Scenario s;
  s.source = source;
  try {
    for (const auto& section : scenario_sections())
      store_keys(s, section.keys, section_table(root, section.name), section.name);
  } catch (const UserError& e) {
    throw UserError(source + ": " + e.what());  // a key whose store checks it against the keys before it
  }
  check_run_name(s.name, source);
  s.partition.params = read_member_keys("partition", s.partition.scheme, root);
  if (const auto message = partition_conflict(s.partition, s.data, s.clients); !message.empty())
    throw UserError(source + ": " + message);
  finish_augment(s, root, source);
  const AlgorithmInfo& algorithm = *find_algorithm(s.algorithm);
  finish_model_group(s, algorithm, source);
  read_algorithm_params(s, root, algorithm);
  s.availability.params = read_member_keys("availability", s.availability.model, root);
  read_groups(s, root);
  read_hierarchy_tables(s, root);
  record_edge_map_digest(s, root);
  read_timeline(s, root);
  s.sampler.params = read_member_keys("sampler", s.sampler.name, root);
  // Validation wrote every member key, so the member each section chose is in `root`.
  for (const auto& family : member_sections()) {
    if (family.member_key.empty()) continue;
    const auto chosen = root[family.section][family.member_key].value<std::string>();
    for (auto& warning : idle_member_keys(family.section, chosen.value_or(""), root))
      s.warnings.push_back(std::move(warning));
  }
  check_combinations(s, algorithm, source);
  finish_file_model(s, root, algorithm, source);
  check_devices_and_output(s, source);
  s.resolved_toml = resolved_text(root, source);
  return s;
}

}  // namespace drift
