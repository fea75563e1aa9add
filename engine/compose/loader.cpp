#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "engine/algorithms/algorithm.hpp"
#include "engine/core/error.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/scenario/scenario.hpp"
#include "engine/training/devices.hpp"
#include "engine/scenario/schema.hpp"
#include "engine/scenario/suggest.hpp"

namespace drift {
namespace {

std::string kind_name(ParamKind kind) {
  switch (kind) {
    case ParamKind::boolean: return "a boolean (true or false)";
    case ParamKind::integer: return "an integer";
    case ParamKind::number: return "a number";
    case ParamKind::string: return "a string";
    case ParamKind::number_list: return "a list of numbers";
  }
  return "?";
}

std::string format_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}


// Validates one parsed table against the schema, filling in defaults as it goes.
class Validator {
 public:
  Validator(toml::table& root, std::string source, std::set<std::string> overridden)
      : root_(root), source_(std::move(source)), overridden_(std::move(overridden)) {
    for (const auto& section : scenario_schema())
      for (const auto& k : section.keys) known_paths_.push_back(path_of(section.name, k.key));
    for (const auto& a : algorithm_catalog())
      for (const auto& p : a.params) known_paths_.push_back("algorithm." + p.key);
  }

  void run() {
    for (auto&& [k, node] : root_) {
      const std::string name(k.str());
      if (name == "groups") {
        if (!node.is_table()) fail(&node, name, "'groups' must hold tables ([groups.NAME])");
      } else if (name == "timeline") {
        if (!node.is_array_of_tables()) fail(&node, name, "'timeline' must be an array of tables ([[timeline]])");
      } else if (find_section(name) != nullptr) {
        if (!node.is_table()) fail(&node, name, "'" + name + "' must be a table ([" + name + "])");
      } else if (find_key(top_level(), name) == nullptr) {
        fail_at_key(k, name, "unknown key '" + name + "'" + suggestion(name));
      }
    }
    for (const auto& section : scenario_schema()) {
      if (section.name.empty()) {
        check_keys(section, root_, {});
        continue;
      }
      auto* table = root_.get_as<toml::table>(section.name);
      if (table == nullptr) table = root_.insert(section.name, toml::table{}).first->second.as_table();
      std::vector<ParamSpec> extra;
      if (section.name == "algorithm") extra = algorithm_params(*table);
      check_keys(section, *table, extra);
    }
    check_sampler();
    check_groups();
    check_timeline();
  }

  [[noreturn]] void fail(const toml::node* node, const std::string& path, const std::string& message) const {
    throw UserError(where(node, path) + ": " + message);
  }

  std::string where(const toml::node* node, const std::string& path) const {
    return node != nullptr ? where(node->source(), path) : where(toml::source_region{}, path);
  }

  std::string where(const toml::source_region& region, const std::string& path) const {
    if (overridden_.count(path)) return "--set " + path;
    if (region.begin.line > 0)
      return source_ + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column);
    return source_;
  }

  // An unknown key is reported where the key is written, not where its value is.
  [[noreturn]] void fail_at_key(const toml::key& key, const std::string& path, const std::string& message) const {
    throw UserError(where(key.source(), path) + ": " + message);
  }

 private:
  static std::string path_of(const std::string& section, const std::string& key) {
    return section.empty() ? key : section + "." + key;
  }

  static const SectionSpec& top_level() { return scenario_schema().front(); }

  static const SectionSpec* find_section(const std::string& name) {
    for (const auto& s : scenario_schema())
      if (!s.name.empty() && s.name == name) return &s;
    return nullptr;
  }

  static const ParamSpec* find_key(const SectionSpec& section, const std::string& key,
                                   const std::vector<ParamSpec>& extra = {}) {
    for (const auto& k : section.keys)
      if (k.key == key) return &k;
    for (const auto& k : extra)
      if (k.key == key) return &k;
    return nullptr;
  }

  std::string suggestion(const std::string& path) const {
    const auto dot = path.rfind('.');
    const std::string leaf = dot == std::string::npos ? path : path.substr(dot + 1);
    for (const auto& known : known_paths_) {
      const auto kd = known.rfind('.');
      // The path itself can be "known" (another algorithm's parameter): no use suggesting it.
      if (known != path && (kd == std::string::npos ? known : known.substr(kd + 1)) == leaf)
        return " (did you mean '" + known + "'?)";
    }
    std::vector<std::string> candidates = known_paths_;
    for (const auto& s : scenario_schema())
      if (!s.name.empty()) candidates.push_back(s.name);
    return did_you_mean(path, candidates);
  }

  std::vector<ParamSpec> algorithm_params(toml::table& table) {
    const ParamSpec& name_spec = *find_key(*find_section("algorithm"), "name");
    const std::string name = table.contains("name")
                                 ? std::get<std::string>(read(name_spec, "algorithm.name", *table.get("name")))
                                 : std::get<std::string>(*name_spec.default_value);
    const AlgorithmInfo* info = find_algorithm(name);
    if (info == nullptr) return {};
    auto params = drift::algorithm_params(*info);
    if (const toml::node* preset = table.get("preset"); preset != nullptr && !info->presets.empty())
      params = drift::algorithm_params(*info, std::get<std::string>(read(params.front(), "algorithm.preset", *preset)));
    return params;
  }

  void check_keys(const SectionSpec& section, toml::table& table, const std::vector<ParamSpec>& extra) {
    if (!section.name.empty()) {
      for (auto&& [k, node] : table) {
        const std::string key(k.str());
        if (find_key(section, key, extra) == nullptr) {
          const std::string path = path_of(section.name, key);
          std::string message = "unknown key '" + path + "'";
          std::vector<std::string> owners;  // algorithms that do take this key
          if (section.name == "algorithm")
            for (const auto& a : algorithm_catalog())
              for (const auto& p : a.params)
                if (p.key == key) owners.push_back(a.name);
          message += owners.empty() ? suggestion(path) : " (a parameter of " + join(owners) + ")";
          if (section.name == "algorithm") {
            std::vector<std::string> names;
            for (const auto& p : extra) names.push_back(p.key);
            message += names.empty() ? "; this algorithm takes no parameters"
                                     : "; this algorithm's parameters are: " + join(names);
          }
          fail_at_key(k, path, message);
        }
      }
    }
    auto check = [&](const ParamSpec& spec) {
      const std::string path = path_of(section.name, spec.key);
      if (toml::node* node = table.get(spec.key)) {
        read(spec, path, *node);
      } else if (spec.default_value) {
        insert(table, spec.key, *spec.default_value);
      }
    };
    for (const auto& spec : section.keys) check(spec);
    for (const auto& spec : extra) check(spec);
  }

  // Checks a table that takes no defaults (a group, a timeline entry, an override), with
  // optional nested tables checked against their own keys.
  void check_plain(const std::string& prefix, toml::table& table, const std::vector<ParamSpec>& specs,
                   const std::map<std::string, const std::vector<ParamSpec>*>& nested = {}) {
    for (auto&& [k, node] : table) {
      const std::string key(k.str());
      const std::string path = prefix + "." + key;
      if (auto it = nested.find(key); it != nested.end()) {
        if (!node.is_table()) fail(&node, path, path + " must be a table");
        check_plain(path, *node.as_table(), *it->second);
        continue;
      }
      const ParamSpec* spec = nullptr;
      for (const auto& s : specs)
        if (s.key == key) spec = &s;
      if (spec == nullptr) {
        std::vector<std::string> candidates;
        for (const auto& s : specs) candidates.push_back(prefix + "." + s.key);
        for (const auto& [name, _] : nested) candidates.push_back(prefix + "." + name);
        fail_at_key(k, path, "unknown key '" + path + "'" + did_you_mean(path, candidates));
      }
      read(*spec, path, node);
    }
  }

  void require(const toml::table& table, const toml::node* anchor, const std::string& prefix, const std::string& key,
               const std::string& why) const {
    if (!table.contains(key)) fail(anchor, prefix, prefix + "." + key + " is required " + why);
  }

  void check_groups() {
    auto* groups = root_.get_as<toml::table>("groups");
    if (groups == nullptr) return;
    const std::map<std::string, const std::vector<ParamSpec>*> nested = {
        {"profile", &find_section("profile")->keys}, {"availability", &find_section("availability")->keys}};
    for (auto&& [k, node] : *groups) {
      const std::string prefix = "groups." + std::string(k.str());
      if (!node.is_table()) fail(&node, prefix, prefix + " must be a table ([" + prefix + "])");
      auto& group = *node.as_table();
      check_plain(prefix, group, group_schema(), nested);
      require(group, &node, prefix, "rule", "(dominant_label, label_set, id_range or proportion)");
      const auto rule = group["rule"].value<std::string>().value();
      if (rule == "dominant_label" || rule == "label_set") {
        require(group, &node, prefix, "labels", "for rule " + rule);
        const auto* labels = group.get("labels");
        if (labels->as_array()->empty()) fail(labels, prefix + ".labels", prefix + ".labels must not be empty");
        for (const auto& label : *labels->as_array())
          if (!label.is_integer()) fail(&label, prefix + ".labels", prefix + ".labels must hold integer class ids");
      } else if (rule == "id_range") {
        require(group, &node, prefix, "from", "for rule id_range");
        require(group, &node, prefix, "to", "for rule id_range");
        if (group["from"].value<std::int64_t>().value() > group["to"].value<std::int64_t>().value())
          fail(group.get("to"), prefix + ".to", prefix + ".to must be >= " + prefix + ".from");
      } else if (rule == "proportion") {
        require(group, &node, prefix, "share", "for rule proportion");
      }
    }
  }

  void check_timeline() {
    auto* timeline = root_.get_as<toml::array>("timeline");
    if (timeline == nullptr) return;
    auto* groups = root_.get_as<toml::table>("groups");
    std::vector<std::string> group_names;
    if (groups != nullptr)
      for (auto&& [k, _] : *groups) group_names.emplace_back(k.str());
    for (std::size_t i = 0; i < timeline->size(); ++i) {
      auto& node = *timeline->get(i);
      const std::string prefix = "timeline[" + std::to_string(i + 1) + "]";
      auto& entry = *node.as_table();
      check_plain(prefix, entry, timeline_schema());
      if (entry.contains("at_round") == entry.contains("at_time"))
        fail(&node, prefix, prefix + " needs exactly one of at_round and at_time");
      require(entry, &node, prefix, "action", "");
      const auto action = entry["action"].value<std::string>().value();
      const bool needs_group = action == "offline" || action == "online" || action == "speed" ||
                               action == "leave" || action == "join";
      if (needs_group) {
        require(entry, &node, prefix, "group", "for action " + action);
        const auto group = entry["group"].value<std::string>().value();
        if (std::find(group_names.begin(), group_names.end(), group) == group_names.end()) {
          fail(entry.get("group"), prefix + ".group",
               prefix + ": unknown group '" + group + "'" + did_you_mean(group, group_names) +
                   (group_names.empty() ? "; define it as [groups." + group + "]" : "; groups: " + join(group_names)));
        }
      }
      if (action == "speed" || action == "fraction" || action == "deadline")
        require(entry, &node, prefix, "value", "for action " + action);
      if (action == "speed" && entry["value"].value<double>().value_or(0.0) <= 0.0)
        fail(entry.get("value"), prefix + ".value", prefix + ".value (a speed factor) must be > 0");
      if (action == "fraction") {
        const double v = entry["value"].value<double>().value_or(0.0);
        if (v <= 0.0 || v > 1.0) fail(entry.get("value"), prefix + ".value", prefix + ".value (a fraction) must be in (0, 1]");
      }
      if (action == "sampler") {
        require(entry, &node, prefix, "sampler", "for action sampler");
        const auto name = entry["sampler"].value<std::string>().value();
        const auto names = sampler_names();
        if (std::find(names.begin(), names.end(), name) == names.end())
          fail(entry.get("sampler"), prefix + ".sampler",
               "unknown sampler '" + name + "'" + did_you_mean(name, names) + "; choose one of: " + join(names));
      }
    }
  }

  void check_sampler() {
    auto* sampler = root_.get_as<toml::table>("sampler");
    const toml::node* count = sampler->get("clients_per_round");
    const toml::node* fraction = sampler->get("fraction");
    if (count != nullptr && fraction != nullptr) {
      fail(fraction, "sampler.fraction", "set either sampler.clients_per_round or sampler.fraction, not both");
    }
    if (count == nullptr && fraction == nullptr) insert(*sampler, "fraction", 0.1);
    if (count != nullptr) {
      const auto clients = root_["federation"]["clients"].value<std::int64_t>().value_or(0);
      const auto n = count->value<std::int64_t>().value_or(0);
      if (n > clients) {
        fail(count, "sampler.clients_per_round",
             "sampler.clients_per_round is " + std::to_string(n) + " but there are only " +
                 std::to_string(clients) + " clients (federation.clients)");
      }
    }
  }

  static void insert(toml::table& table, const std::string& key, const ParamValue& value) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::vector<double>>) {
            toml::array array;
            for (double d : v) array.push_back(d);
            table.insert_or_assign(key, std::move(array));
          } else {
            table.insert_or_assign(key, v);
          }
        },
        value);
  }

  // Type-, range- and choice-checks one value.
  ParamValue read(const ParamSpec& spec, const std::string& path, const toml::node& node) const {
    auto wrong_type = [&]() {
      std::ostringstream got;
      got << node.type();
      fail(&node, path, path + " must be " + kind_name(spec.kind) + ", not " + got.str());
    };
    ParamValue value;
    switch (spec.kind) {
      case ParamKind::boolean:
        if (!node.is_boolean()) wrong_type();
        value = node.as_boolean()->get();
        break;
      case ParamKind::integer:
        if (!node.is_integer()) wrong_type();
        value = node.as_integer()->get();
        break;
      case ParamKind::number:
        if (node.is_integer()) value = static_cast<double>(node.as_integer()->get());
        else if (node.is_floating_point()) value = node.as_floating_point()->get();
        else wrong_type();
        break;
      case ParamKind::string:
        if (!node.is_string()) wrong_type();
        value = node.as_string()->get();
        break;
      case ParamKind::number_list: {
        if (!node.is_array()) wrong_type();
        std::vector<double> list;
        for (const auto& item : *node.as_array()) {
          if (item.is_integer()) list.push_back(static_cast<double>(item.as_integer()->get()));
          else if (item.is_floating_point()) list.push_back(item.as_floating_point()->get());
          else wrong_type();
        }
        value = list;
        break;
      }
    }
    auto check_range = [&](double v) {
      if (std::isnan(v)) fail(&node, path, path + " must be a number, not nan");
      if (spec.min && (spec.min_exclusive ? v <= *spec.min : v < *spec.min)) {
        fail(&node, path, path + " must be " + (spec.min_exclusive ? "> " : ">= ") +
                              format_number(*spec.min) + ", got " + format_number(v));
      }
      if (spec.max && v > *spec.max)
        fail(&node, path, path + " must be <= " + format_number(*spec.max) + ", got " + format_number(v));
    };
    if (auto* i = std::get_if<std::int64_t>(&value)) check_range(static_cast<double>(*i));
    if (auto* d = std::get_if<double>(&value)) check_range(*d);
    if (auto* l = std::get_if<std::vector<double>>(&value))
      for (double d : *l) check_range(d);
    if (spec.choices) {
      const auto& s = std::get<std::string>(value);
      const auto options = spec.choices();
      if (std::find(options.begin(), options.end(), s) == options.end()) {
        // "unknown dataset 'x'", "unknown action 'x'"; for a section's `name`, the section:
        // "unknown algorithm 'x'".
        const auto dot = path.rfind('.');
        const std::string leaf = dot == std::string::npos ? path : path.substr(dot + 1);
        const auto section_start = path.rfind('.', dot == std::string::npos ? 0 : dot - 1);
        const std::string section = dot == std::string::npos ? path
                                    : path.substr(section_start == std::string::npos || section_start >= dot ? 0 : section_start + 1,
                                                  dot - (section_start == std::string::npos || section_start >= dot ? 0 : section_start + 1));
        const std::string what = leaf == "name" ? section : leaf;
        fail(&node, path, "unknown " + what + " '" + s + "'" + did_you_mean(s, options) +
                              "; choose one of: " + join(options));
      }
    }
    return value;
  }

  toml::table& root_;
  std::string source_;
  std::set<std::string> overridden_;
  std::vector<std::string> known_paths_;
};

toml::node* ensure_parent(toml::table& root, const std::string& key, std::string& leaf) {
  toml::table* table = &root;
  std::size_t start = 0;
  for (;;) {
    const auto dot = key.find('.', start);
    if (dot == std::string::npos) {
      leaf = key.substr(start);
      return table;
    }
    const std::string part = key.substr(start, dot - start);
    toml::node* next = table->get(part);
    if (next == nullptr) next = &table->insert(part, toml::table{}).first->second;
    if (!next->is_table()) throw UserError("--set " + key + ": '" + part + "' is not a table");
    table = next->as_table();
    start = dot + 1;
  }
}

void apply_override(toml::table& root, const Override& o) {
  if (o.key.empty()) throw UserError("--set needs key=value");
  std::string leaf;
  auto* table = ensure_parent(root, o.key, leaf)->as_table();
  if (leaf.empty()) throw UserError("--set " + o.key + ": empty key");
  try {
    auto parsed = toml::parse("v = " + o.value);
    table->insert_or_assign(leaf, *parsed.get("v"));
  } catch (const toml::parse_error&) {
    table->insert_or_assign(leaf, o.value);  // a bare word: take it as a string
  }
}

template <class T>
T get(const toml::table& root, const std::string& section, const std::string& key) {
  const toml::node* node = section.empty() ? root.get(key) : root[section][key].node();
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

// Partition keys that are each valid but do not fit together; empty when they do.
std::string partition_conflict(const PartitionConfig& p, std::uint32_t clients) {
  if (p.scheme == "file" && p.file.empty())
    return "partition.scheme = \"file\" needs partition.file (a JSON list of per-client index lists)";
  if (p.scheme != "file" && !p.file.empty()) return "partition.file is only read with partition.scheme = \"file\"";
  if (p.scheme == "file" && p.long_tail != 1.0)
    return "partition.long_tail does not apply to scheme = \"file\" (the file fixes every index)";
  if (p.scheme == "dirichlet_creff" && clients < 10)
    return "partition.scheme = \"dirichlet_creff\" splits among 10 workers per chunk and needs federation.clients >= 10";
  return "";
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

Scenario build(toml::table& root, const std::string& source) {
  const auto base_dir = std::filesystem::path(source).parent_path();
  absolutise_traces(root, base_dir);
  Scenario s;
  s.source = source;
  s.name = get<std::string>(root, "", "name");
  s.seed = static_cast<std::uint64_t>(get<std::int64_t>(root, "", "seed"));
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
  if (const auto message = partition_conflict(s.partition, s.clients); !message.empty())
    throw UserError(source + ": " + message);
  s.rounds = static_cast<std::uint32_t>(get<std::int64_t>(root, "federation", "rounds"));
  s.sampler.name = get<std::string>(root, "sampler", "name");
  if (root["sampler"]["clients_per_round"]) s.sampler.clients_per_round = get<std::int64_t>(root, "sampler", "clients_per_round");
  if (root["sampler"]["fraction"]) s.sampler.fraction = get<double>(root, "sampler", "fraction");
  s.sampler.candidates = get<double>(root, "sampler", "candidates");
  s.sampler.strata = get<std::string>(root, "sampler", "strata");
  s.model = get<std::string>(root, "model", "name");
  s.model_width = get<std::int64_t>(root, "model", "width");
  s.algorithm = get<std::string>(root, "algorithm", "name");
  const AlgorithmInfo& algorithm = *find_algorithm(s.algorithm);
  read_model_group(s, root, algorithm, source);
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
  s.profile = read_profile(*root["profile"].as_table(), ProfileConfig{}, base_dir);
  s.availability = read_availability(*root["availability"].as_table(), AvailabilityConfig{}, base_dir);
  if (const auto* groups = root["groups"].as_table()) {
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
  const auto& sim = *root["simulation"].as_table();
  s.simulation.mode = sim["mode"].value<std::string>().value();
  s.simulation.deadline = sim["deadline"].value<double>().value();
  s.simulation.over_selection = sim["over_selection"].value<double>().value();
  s.simulation.min_cohort = sim["min_cohort"].value<std::int64_t>().value();
  s.simulation.dropout = sim["dropout"].value<double>().value();
  s.simulation.late_updates = sim["late_updates"].value<std::string>().value();
  s.simulation.train_doomed = sim["train_doomed"].value<bool>().value();
  s.simulation.max_virtual_time = sim["max_virtual_time"].value<double>().value();
  s.simulation.drift_window = sim["drift_window"].value<std::int64_t>().value();
  s.simulation.client_state = sim["client_state"].value<std::string>().value();
  if (algorithm.private_models) {
    if (s.data.client_test_fraction <= 0.0)
      throw UserError(source + ": algorithm '" + s.algorithm + "' keeps private models, evaluated on each client's "
                      "own test split: set data.client_test_fraction (PFLlib: 0.25)");
    if (s.simulation.mode != "sync")
      throw UserError(source + ": algorithm '" + s.algorithm + "' keeps private models: simulation.mode must be "
                      "sync (fedasync and fedbuff mix global weights)");
  }
  const auto& as = *root["async"].as_table();
  s.async.concurrency = as["concurrency"].value<std::int64_t>().value();
  s.async.alpha = as["alpha"].value<double>().value();
  s.async.staleness = as["staleness"].value<std::string>().value();
  s.async.staleness_a = as["staleness_a"].value<double>().value();
  s.async.staleness_b = as["staleness_b"].value<double>().value();
  s.async.buffer_size = as["buffer_size"].value<std::int64_t>().value();
  s.async.server_lr = as["server_lr"].value<double>().value();
  if (const auto* timeline = root["timeline"].as_array()) {
    for (std::size_t i = 0; i < timeline->size(); ++i) {
      const auto& t = *timeline->get(i)->as_table();
      TimelineEntry e;
      e.index = i + 1;
      e.at_round = t["at_round"].value<std::int64_t>().value_or(0);
      e.at_time = t["at_time"].value<double>().value_or(-1.0);
      e.action = t["action"].value<std::string>().value();
      e.group = t["group"].value<std::string>().value_or("");
      e.value = t["value"].value<double>().value_or(0.0);
      e.sampler = t["sampler"].value<std::string>().value_or("");
      s.timeline.push_back(std::move(e));
    }
  }
  if (algorithm.check) {
    const auto message = algorithm.check(s.algorithm_params, FederationShape{s.clients, 0, aggregated_per_round(s)});
    if (!message.empty()) throw UserError(source + ": " + message);
  }
  s.cpu_slots = get<std::int64_t>(root, "devices", "cpu_slots");
  s.device_pool = get<std::string>(root, "devices", "pool");
  if (!s.device_pool.empty()) {
    if (s.cpu_slots != 0) throw UserError(source + ": set devices.cpu_slots or devices.pool, not both");
    try {
      require_devices(parse_device_pool(s.device_pool));
    } catch (const UserError& e) {
      throw UserError(source + ": devices.pool: " + e.what());
    }
  }
  s.runs_dir = get<std::string>(root, "output", "runs_dir");
  s.log_eligible = get<bool>(root, "output", "log_eligible");

  std::ostringstream text;
  text << "# drift scenario, resolved from " << source << " with every default written out.\n"
       << "# `drift run` on this file repeats the run exactly.\n\n"
       // Relaxed precision prints 0.7 as 0.7: exact for every decimal a person can type.
       << toml::toml_formatter(root, toml::toml_formatter::default_flags | toml::format_flags::relaxed_float_precision)
       << "\n";
  s.resolved_toml = text.str();
  return s;
}

}  // namespace

const std::string& client_architecture(const Scenario& s, std::uint32_t client) {
  if (s.model_group.empty()) return s.model;
  if (!s.model_assignment.empty()) return s.model_group.at(s.model_assignment.at(client));
  return s.model_group[client % s.model_group.size()];
}

std::uint32_t SamplerConfig::cohort_size(std::uint32_t clients) const {
  if (clients_per_round > 0) return static_cast<std::uint32_t>(std::min<std::int64_t>(clients_per_round, clients));
  const auto n = static_cast<std::int64_t>(std::llround(fraction * clients));
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(n, 1, clients));
}

std::uint32_t aggregated_per_round(const Scenario& s) {
  if (s.simulation.mode == "fedasync") return 1;
  if (s.simulation.mode == "fedbuff") return static_cast<std::uint32_t>(s.async.buffer_size);
  return s.sampler.cohort_size(s.clients);
}

Override parse_override(const std::string& flag) {
  const auto eq = flag.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError("--set " + flag + ": expected key=value, e.g. --set federation.rounds=5");
  return {flag.substr(0, eq), flag.substr(eq + 1)};
}

Scenario parse_scenario(const std::string& toml_text, const std::string& source_name,
                        const std::vector<Override>& overrides) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    throw UserError(source_name + ":" + std::to_string(e.source().begin.line) + ":" +
                    std::to_string(e.source().begin.column) + ": " + std::string(e.description()));
  }
  std::set<std::string> overridden;
  for (const auto& o : overrides) {
    apply_override(root, o);
    overridden.insert(o.key);
  }
  if (!root.contains("name")) {
    root.insert("name", std::filesystem::path(source_name).stem().string());
  }
  Validator(root, source_name, overridden).run();
  return build(root, source_name);
}

Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot open scenario file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scenario(text.str(), path, overrides);
}

}  // namespace drift
