// A validated scenario table into the Scenario structs, with the checks that span sections
// (partition keys that conflict, private models and modes, device pools).
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/run_directory.hpp"
#include "engine/compose/data_keys.hpp"
#include "engine/compose/scenario_table.hpp"
#include "engine/compose/toml_writer.hpp"
#include "engine/config/suggest.hpp"
#include "engine/core/error.hpp"
#include "engine/data/dataset.hpp"
#include "engine/models/model.hpp"
#include "engine/training/devices.hpp"

namespace drift {
namespace {

template <class T>
T get(const toml::table& root, const std::string& section, const std::string& key) {
  // A nested section's name is its path ("data.augment").
  const toml::node* node = section.empty() ? root.get(key) : root.at_path(section + "." + key).node();
  if constexpr (std::is_same_v<T, double>) {
    if (node->is_integer()) return static_cast<double>(node->as_integer()->get());
    return node->as_floating_point()->get();
  } else {
    return node->template value<T>().value();
  }
}

// Relative trace paths are relative to the scenario file; stored absolute, so a resolved
// scenario.toml written elsewhere still finds them.
std::string resolve_path(const std::string& path, const std::filesystem::path& base_dir) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return std::filesystem::absolute(base_dir / path).lexically_normal().string();
}

ProfileConfig read_profile(const toml::table& t, ProfileConfig p, const std::filesystem::path& base_dir) {
  if (auto v = t["speed"].value<double>()) p.speed = *v;
  if (auto v = t["speed_sigma"].value<double>()) p.speed_sigma = *v;
  if (auto v = t["up_bandwidth"].value<double>()) p.up_bandwidth = *v;
  if (auto v = t["down_bandwidth"].value<double>()) p.down_bandwidth = *v;
  if (auto v = t["latency"].value<double>()) p.latency = *v;
  if (auto v = t["trace"].value<std::string>()) p.trace = resolve_path(*v, base_dir);
  if (auto v = t["trace_clients"].value<std::string>()) p.trace_clients = *v;
  return p;
}

AvailabilityConfig read_availability(const toml::table& t, AvailabilityConfig a, const std::filesystem::path& base_dir) {
  if (auto v = t["model"].value<std::string>()) a.model = *v;
  if (auto v = t["mean_online"].value<double>()) a.mean_online = *v;
  if (auto v = t["mean_offline"].value<double>()) a.mean_offline = *v;
  if (auto v = t["period"].value<double>()) a.period = *v;
  if (auto v = t["duty"].value<double>()) a.duty = *v;
  if (auto v = t["phase"].value<double>()) a.phase = *v;
  if (auto v = t["trace"].value<std::string>()) a.trace = resolve_path(*v, base_dir);
  if (auto v = t["trace_clients"].value<std::string>()) a.trace_clients = *v;
  return a;
}

// Rewrites trace paths in the table to the absolute paths the run will use.
void absolutise_traces(toml::table& root, const std::filesystem::path& base_dir) {
  auto fix = [&](toml::node_view<toml::node> section) {
    if (auto* t = section.as_table())
      if (auto v = (*t)["trace"].value<std::string>(); v && !v->empty()) t->insert_or_assign("trace", resolve_path(*v, base_dir));
  };
  fix(root["profile"]);
  fix(root["availability"]);
  if (auto* partition = root["partition"].as_table())
    if (auto v = (*partition)["file"].value<std::string>(); v && !v->empty())
      partition->insert_or_assign("file", resolve_path(*v, base_dir));
  if (auto* groups = root["groups"].as_table())
    for (auto&& [k, node] : *groups) {
      fix(node.as_table()->operator[]("profile"));
      fix(node.as_table()->operator[]("availability"));
    }
}

// [model] group and assignment: which architecture each client trains. Only algorithms whose
// clients keep private models can mix architectures: weights of different shapes cannot be
// averaged.
void read_model_group(Scenario& s, const toml::table& root, const AlgorithmInfo& algorithm, const std::string& source) {
  const auto text = get<std::string>(root, "model", "group");
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t"), last = item.find_last_not_of(" \t");
    if (first == std::string::npos) throw UserError(source + ": model.group: empty architecture name in '" + text + "'");
    const auto name = item.substr(first, last - first + 1);
    const auto names = model_names();
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw UserError(source + ": model.group: unknown model '" + name + "'" + did_you_mean(name, names) +
                      "; the models are: " + join(names));
    s.model_group.push_back(name);
  }
  if (const auto* list = root["model"]["assignment"].as_array()) {
    if (s.model_group.empty()) throw UserError(source + ": model.assignment needs model.group");
    if (list->size() != s.clients)
      throw UserError(source + ": model.assignment has " + std::to_string(list->size()) + " entries for " +
                      std::to_string(s.clients) + " clients (one architecture index per client)");
    for (const auto& v : *list) {
      const double index = v.value<double>().value();
      if (index != std::floor(index) || index >= static_cast<double>(s.model_group.size()))
        throw UserError(source + ": model.assignment: " + std::to_string(index) + " is not an index into model.group (0.." +
                        std::to_string(s.model_group.size() - 1) + ")");
      s.model_assignment.push_back(static_cast<std::uint32_t>(index));
    }
  }
  if (!s.model_group.empty()) s.model = s.model_group.front();
  std::vector<std::string> distinct = s.model_group;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (distinct.size() > 1 && !algorithm.private_models)
    throw UserError(source + ": model.group mixes architectures, but algorithm '" + s.algorithm +
                    "' averages weights; use an algorithm whose clients keep private models (drift list)");
  s.feature_dim = get<std::int64_t>(root, "model", "feature_dim");
  if (s.feature_dim == 0 && distinct.size() > 1) s.feature_dim = 512;  // FedKTL's d'
}

void read_data(Scenario& s, const toml::table& root, const std::string& source) {
  s.data.dataset = get<std::string>(root, "data", "dataset");
  s.data.path = get<std::string>(root, "data", "path");
  s.data.max_train_samples = get<std::int64_t>(root, "data", "max_train_samples");
  s.data.max_test_samples = get<std::int64_t>(root, "data", "max_test_samples");
  s.partition.scheme = get<std::string>(root, "partition", "scheme");
  s.partition.alpha = get<double>(root, "partition", "alpha");
  s.partition.shards_per_client = get<std::int64_t>(root, "partition", "shards_per_client");
  s.partition.min_client_samples = get<std::int64_t>(root, "partition", "min_client_samples");
  s.partition.max_attempts = get<std::int64_t>(root, "partition", "max_attempts");
  s.partition.long_tail = get<double>(root, "partition", "long_tail");
  s.partition.file = get<std::string>(root, "partition", "file");
  s.data.client_test_fraction = get<double>(root, "data", "client_test_fraction");
  s.clients = static_cast<std::uint32_t>(get<std::int64_t>(root, "federation", "clients"));
  if (const auto message = partition_conflict(s.partition, s.data, s.clients); !message.empty())
    throw UserError(source + ": " + message);
  s.rounds = static_cast<std::uint32_t>(get<std::int64_t>(root, "federation", "rounds"));
  s.sampler.name = get<std::string>(root, "sampler", "name");
  if (root["sampler"]["clients_per_round"]) s.sampler.clients_per_round = get<std::int64_t>(root, "sampler", "clients_per_round");
  if (root["sampler"]["fraction"]) s.sampler.fraction = get<double>(root, "sampler", "fraction");
  s.sampler.candidates = get<double>(root, "sampler", "candidates");
  s.sampler.strata = get<std::string>(root, "sampler", "strata");
}

void read_algorithm_params(Scenario& s, const toml::table& root, const AlgorithmInfo& algorithm) {
  const auto* preset = root["algorithm"]["preset"].as_string();
  for (const auto& spec : algorithm_params(algorithm, preset ? preset->get() : "")) {
    const toml::node* node = root["algorithm"][spec.key].node();
    switch (spec.kind) {
      case ParamKind::boolean: s.algorithm_params.set(spec.key, node->as_boolean()->get()); break;
      case ParamKind::integer: s.algorithm_params.set(spec.key, node->as_integer()->get()); break;
      case ParamKind::number: s.algorithm_params.set(spec.key, get<double>(root, "algorithm", spec.key)); break;
      case ParamKind::string: s.algorithm_params.set(spec.key, node->as_string()->get()); break;
      case ParamKind::number_list: {
        std::vector<double> list;
        for (const auto& item : *node->as_array()) list.push_back(item.value<double>().value());
        s.algorithm_params.set(spec.key, list);
        break;
      }
    }
  }
}

void read_training(Scenario& s, const toml::table& root) {
  s.training.local_epochs = static_cast<std::uint32_t>(get<std::int64_t>(root, "training", "local_epochs"));
  s.training.batch_size = static_cast<std::uint32_t>(get<std::int64_t>(root, "training", "batch_size"));
  s.training.learning_rate = get<double>(root, "training", "lr");
  s.training.momentum = get<double>(root, "training", "momentum");
  s.training.weight_decay = get<double>(root, "training", "weight_decay");
  s.training.drop_last = get<bool>(root, "training", "drop_last");
  s.training.grad_clip = get<double>(root, "training", "grad_clip");
  s.training.lr_decay = get<double>(root, "training", "lr_decay");
  s.evaluation.every = get<std::int64_t>(root, "evaluation", "every");
  s.evaluation.batch_size = get<std::int64_t>(root, "evaluation", "batch_size");
  s.evaluation.chunk_size = get<std::int64_t>(root, "evaluation", "chunk_size");
  for (const auto& item : *root["evaluation"]["targets"].as_array())
    s.evaluation.targets.push_back(item.value<double>().value());
  for (const auto& item : *root["evaluation"]["at_times"].as_array())
    s.evaluation.at_times.push_back(item.value<double>().value());
}

void read_groups(Scenario& s, const toml::table& root, const std::filesystem::path& base_dir) {
  s.profile = read_profile(*root["profile"].as_table(), ProfileConfig{}, base_dir);
  s.availability = read_availability(*root["availability"].as_table(), AvailabilityConfig{}, base_dir);
  const auto* groups = root["groups"].as_table();
  if (groups == nullptr) return;
  for (auto&& [k, node] : *groups) {
    const auto& t = *node.as_table();
    GroupConfig g;
    g.name = std::string(k.str());
    g.rule = t["rule"].value<std::string>().value();
    if (const auto* labels = t["labels"].as_array())
      for (const auto& label : *labels) g.labels.push_back(label.value<std::int64_t>().value());
    g.from = t["from"].value<std::int64_t>().value_or(0);
    g.to = t["to"].value<std::int64_t>().value_or(0);
    g.share = t["share"].value<double>().value_or(0.0);
    g.profile = t["profile"].as_table() ? read_profile(*t["profile"].as_table(), s.profile, base_dir) : s.profile;
    g.availability = t["availability"].as_table()
                         ? read_availability(*t["availability"].as_table(), s.availability, base_dir)
                         : s.availability;
    s.groups.push_back(std::move(g));
  }
}

void read_simulation(Scenario& s, const toml::table& root) {
  const auto& sim = *root["simulation"].as_table();
  s.simulation.mode = choice_from<SimulationMode>(sim["mode"].value<std::string>().value());
  s.simulation.deadline = sim["deadline"].value<double>().value();
  s.simulation.over_selection = sim["over_selection"].value<double>().value();
  s.simulation.min_cohort = sim["min_cohort"].value<std::int64_t>().value();
  s.simulation.dropout = sim["dropout"].value<double>().value();
  s.simulation.late_updates = choice_from<LateUpdates>(sim["late_updates"].value<std::string>().value());
  s.simulation.train_doomed = sim["train_doomed"].value<bool>().value();
  s.simulation.max_virtual_time = sim["max_virtual_time"].value<double>().value();
  s.simulation.drift_window = sim["drift_window"].value<std::int64_t>().value();
  s.simulation.client_state = choice_from<ClientStateStore>(sim["client_state"].value<std::string>().value());
  s.simulation.on_divergence = choice_from<DivergencePolicy>(sim["on_divergence"].value<std::string>().value());
  s.simulation.shadow_clients = sim["shadow_clients"].value<std::int64_t>().value();
  const auto& as = *root["async"].as_table();
  s.async.concurrency = as["concurrency"].value<std::int64_t>().value();
  s.async.alpha = as["alpha"].value<double>().value();
  s.async.staleness = choice_from<StalenessKind>(as["staleness"].value<std::string>().value());
  s.async.staleness_a = as["staleness_a"].value<double>().value();
  s.async.staleness_b = as["staleness_b"].value<double>().value();
  s.async.buffer_size = as["buffer_size"].value<std::int64_t>().value();
  s.async.server_lr = as["server_lr"].value<double>().value();
  const auto* timeline = root["timeline"].as_array();
  if (timeline == nullptr) return;
  for (std::size_t i = 0; i < timeline->size(); ++i) {
    const auto& t = *timeline->get(i)->as_table();
    TimelineEntry e;
    e.index = i + 1;
    e.at_round = t["at_round"].value<std::int64_t>().value_or(0);
    e.at_time = t["at_time"].value<double>().value_or(-1.0);
    e.action = choice_from<TimelineAction>(t["action"].value<std::string>().value());
    e.group = t["group"].value<std::string>().value_or("");
    e.value = t["value"].value<double>().value_or(0.0);
    e.sampler = t["sampler"].value<std::string>().value_or("");
    s.timeline.push_back(std::move(e));
  }
}

// Combinations that are valid key by key but cannot run together.
void check_combinations(const Scenario& s, const AlgorithmInfo& algorithm, const std::string& source) {
  if (algorithm.private_models) {
    if (s.data.client_test_fraction <= 0.0 && s.partition.scheme != "natural")
      throw UserError(source + ": algorithm '" + s.algorithm + "' keeps private models, evaluated on each client's "
                      "own test split: set data.client_test_fraction (PFLlib: 0.25), or use natural clients");
  }
  const bool text = find_dataset(s.data.dataset)->text;
  for (const auto& name : s.model_group.empty() ? std::vector<std::string>{s.model} : s.model_group)
    if (find_model(name)->text != text)
      throw UserError(source + ": model '" + name + "' reads " + (text ? "images" : "token sequences") + ", but dataset '" +
                      s.data.dataset + "' holds " + (text ? "text: use char-lstm" : "images"));
  if (text && algorithm.needs_images)
    throw UserError(source + ": algorithm '" + s.algorithm + "' makes images on the server, but dataset '" +
                    s.data.dataset + "' holds text");
  if (s.simulation.mode != SimulationMode::sync && s.simulation.on_divergence == DivergencePolicy::keep_going &&
      s.simulation.max_virtual_time <= 0)
    throw UserError(source + ": simulation.on_divergence = \"continue\" under " + name_of(s.simulation.mode) +
                    " needs simulation.max_virtual_time: once every update fails, no aggregation ever comes, and "
                    "only a time limit ends the run");
  if (s.simulation.shadow_clients > 0 && s.simulation.mode != SimulationMode::sync)
    throw UserError(source + ": simulation.shadow_clients measures a sync round's cohort against the population; "
                    "under " + name_of(s.simulation.mode) + " there is no round cohort to compare");
  if (s.simulation.shadow_clients > 0 && algorithm.private_models)
    throw UserError(source + ": simulation.shadow_clients compares updates of one shared model; '" + s.algorithm +
                    "' keeps private models, which have no common update");
  if (algorithm.check) {
    FederationShape shape;
    shape.num_clients = s.clients;
    shape.cohort = aggregated_per_round(s);
    const auto message = algorithm.check(s.algorithm_params, shape);
    if (!message.empty()) throw UserError(source + ": " + message);
  }
}

void read_devices_and_output(Scenario& s, const toml::table& root, const std::string& source) {
  s.cpu_slots = get<std::int64_t>(root, "devices", "cpu_slots");
  s.device_pool = get<std::string>(root, "devices", "pool");
  s.pack = static_cast<std::uint32_t>(get<std::int64_t>(root, "devices", "pack"));
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
  s.checkpoint.every = get<std::int64_t>(root, "checkpoint", "every");
  s.checkpoint.minutes = get<double>(root, "checkpoint", "minutes");
  s.checkpoint.at_end = get<bool>(root, "checkpoint", "at_end");
  s.runs_dir = get<std::string>(root, "output", "runs_dir");
  check_output_path(s.runs_dir, source + ": output.runs_dir");
  s.log_eligible = get<bool>(root, "output", "log_eligible");
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
    throw UserError(source + ": name '" + name.substr(0, kMaxName) + (name.size() > kMaxName ? "...'" : "'") + " " + why +
                    " (it names the run directory under runs_dir)");
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
  const auto base_dir = std::filesystem::path(source).parent_path();
  absolutise_traces(root, base_dir);
  Scenario s;
  s.source = source;
  s.name = get<std::string>(root, "", "name");
  check_run_name(s.name, source);
  s.seed = static_cast<std::uint64_t>(get<std::int64_t>(root, "", "seed"));
  read_data(s, root, source);
  read_augment(s, root, source);
  s.model = get<std::string>(root, "model", "name");
  s.model_width = get<std::int64_t>(root, "model", "width");
  s.algorithm = get<std::string>(root, "algorithm", "name");
  const AlgorithmInfo& algorithm = *find_algorithm(s.algorithm);
  read_model_group(s, root, algorithm, source);
  read_algorithm_params(s, root, algorithm);
  read_training(s, root);
  read_groups(s, root, base_dir);
  read_simulation(s, root);
  check_combinations(s, algorithm, source);
  read_devices_and_output(s, root, source);
  s.resolved_toml = resolved_text(root, source);
  return s;
}

}  // namespace drift
