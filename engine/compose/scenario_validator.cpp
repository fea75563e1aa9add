// Validation of a scenario table against the schema (engine/compose/schema.cpp): unknown
// keys with a suggestion, types, ranges, names resolved in their registries, defaults filled.
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/member_keys.hpp"
#include "engine/compose/scenario_table.hpp"
#include "engine/compose/schema.hpp"
#include "engine/compose/schema_hierarchy.hpp"
#include "engine/compose/value_reader.hpp"
#include "engine/config/suggest.hpp"
#include "engine/core/error.hpp"
#include "engine/population/availability.hpp"
#include "engine/sampling/sampler.hpp"

namespace drift {
namespace {

// Validates one parsed table against the schema, filling in defaults as it goes.
class Validator {
 public:
  Validator(toml::table& root, std::string source, std::set<std::string> overridden)
      : root_(root), source_(std::move(source)), overridden_(std::move(overridden)) {
    for (const auto& section : scenario_schema())
      for (const auto& k : section.keys) known_paths_.push_back(path_of(section.name, k.key));
    for (const auto& family : member_sections())
      for (const auto& [member, params] : family.members())
        for (const auto& p : *params) known_paths_.push_back(family.section + "." + p.key);
  }

  void run() {
    edges_set_ = root_.at_path("hierarchy.edges").node() != nullptr;  // before defaults fill it in
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
      toml::table* table = &section_table(section.name);
      std::vector<ParamSpec> extra;
      if (section.name == "algorithm") extra = algorithm_params(*table);
      if (const auto key = member_key(section.name); !key.empty())
        extra = member_keys(section.name, chosen(section.name, key, *table), root_);
      check_keys(section, *table, extra);
    }
    check_sampler();
    check_groups();
    check_hierarchy_tables();
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

  // The table of a section, created empty where the file has none; a nested section's name
  // ("data.augment") is its path. Its parent section comes first in the schema and was
  // checked to be a table.
  toml::table& section_table(const std::string& name) {
    toml::table* table = &root_;
    std::size_t start = 0;
    while (true) {
      const auto dot = name.find('.', start);
      const std::string part = name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      auto* next = table->get_as<toml::table>(part);
      if (next == nullptr) next = table->insert(part, toml::table{}).first->second.as_table();
      table = next;
      if (dot == std::string::npos) return *table;
      start = dot + 1;
    }
  }

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

  // The catalogue member a section names by `key` (checked against the key's spec), or the
  // key's default: [algorithm] name, [sampler] name, [partition] scheme, [availability] model.
  std::string chosen(const std::string& section, const std::string& key, const toml::table& table) const {
    const ParamSpec& spec = *find_key(*find_section(section), key);
    const toml::node* node = table.get(key);
    return std::get<std::string>(node != nullptr ? read(spec, section + "." + key, *node) : *spec.default_value);
  }

  std::vector<ParamSpec> algorithm_params(toml::table& table) {
    const AlgorithmInfo* info = find_algorithm(chosen("algorithm", "name", table));
    if (info == nullptr) return {};
    auto params = drift::algorithm_params(*info);
    if (const toml::node* preset = table.get("preset"); preset != nullptr && !info->presets.empty())
      params = drift::algorithm_params(*info, std::get<std::string>(read(params.front(), "algorithm.preset", *preset)));
    return params;
  }

  // The spec of a key that another member of a world family takes ([sampler], [partition],
  // [availability]), or nullptr.
  static const ParamSpec* other_member_key(const std::string& section, const std::string& key) {
    if (member_key(section).empty()) return nullptr;
    for (const auto& [member, params] : members_of(section))
      for (const auto& p : *params)
        if (p.key == key) return &p;
    return nullptr;
  }

  // "unknown key 'algorithm.mu' (a parameter of fedprox); this algorithm takes no parameters"
  std::string unknown_key_message(const SectionSpec& section, const std::string& key,
                                  const std::vector<ParamSpec>& extra) const {
    const std::string path = path_of(section.name, key);
    const auto members = members_of(section.name);
    std::vector<std::string> owners;  // members that do take this key
    for (const auto& [member, params] : members)
      for (const auto& p : *params)
        if (p.key == key) owners.push_back(member);
    std::string message = "unknown key '" + path + "'";
    message += owners.empty() ? suggestion(path) : " (a parameter of " + join(owners) + ")";
    return members.empty() ? message : message + members_take(section.name, extra);
  }

  void check_keys(const SectionSpec& section, toml::table& table, const std::vector<ParamSpec>& extra) {
    if (!section.name.empty()) {
      for (auto&& [k, node] : table) {
        const std::string key(k.str());
        if (const auto* nested = find_section(path_of(section.name, key)); nested != nullptr) {
          if (!node.is_table())
            fail(&node, nested->name, "'" + nested->name + "' must be a table ([" + nested->name + "])");
          continue;
        }
        if (find_key(section, key, extra) != nullptr) continue;
        // Named edges and the edges' availability model: check_hierarchy_tables.
        if (section.name == "hierarchy" && (key == "edge" || key == "availability_model")) continue;
        // Another sampler's, scheme's or availability model's key: checked by its owner's
        // spec and kept, doing nothing here (a study's grid may switch to the member that
        // takes it); the run names it in a warning.
        if (const auto* owned = other_member_key(section.name, key)) {
          read(*owned, path_of(section.name, key), node);
          continue;
        }
        fail_at_key(k, path_of(section.name, key), unknown_key_message(section, key, extra));
      }
    }
    auto check = [&](const ParamSpec& spec) {
      const std::string path = path_of(section.name, spec.key);
      if (toml::node* node = table.get(spec.key)) {
        const auto value = read(spec, path, *node);
        // --set lr=1 is the float 1.0, written as one: a study's cells lr=1 and lr=1.0 then
        // resolve to one scenario, which it refuses to run twice. (A file's node keeps its
        // type, and with it the line and column its later messages name.)
        if (spec.kind == ParamKind::number && node->is_integer() && overridden_.count(path))
          insert(table, spec.key, value);
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
    for (auto&& [k, node] : *groups) {
      const std::string prefix = "groups." + std::string(k.str());
      if (!node.is_table()) fail(&node, prefix, prefix + " must be a table ([" + prefix + "])");
      auto& group = *node.as_table();
      // A group's availability takes the keys of its own model, or of the global one it keeps.
      auto availability = find_section("availability")->keys;
      const auto own = group.at_path("availability.model").value<std::string>();
      // The sections were checked before the groups, so [availability] is a table by now.
      const auto model = own ? *own : chosen("availability", "model", *root_.get_as<toml::table>("availability"));
      for (auto& spec : availability_model(model).params) availability.push_back(std::move(spec));
      const std::map<std::string, const std::vector<ParamSpec>*> nested = {{"profile", &find_section("profile")->keys},
                                                                           {"availability", &availability}};
      check_plain(prefix, group, group_schema(), nested);
      require(group, &node, prefix, "rule", "(one of " + join(choice_names<GroupRule>()) + ")");
      const auto rule = choice_from<GroupRule>(group["rule"].value<std::string>().value());
      if (rule == GroupRule::dominant_label || rule == GroupRule::label_set) {
        require(group, &node, prefix, "labels", "for rule " + name_of(rule));
        const auto* labels = group.get("labels");
        const auto integer = [&](const toml::node& label) {
          if (!label.is_integer()) fail(&label, prefix + ".labels", prefix + ".labels must hold integer class ids");
        };
        if (const auto* list = labels->as_array()) {
          if (list->empty()) fail(labels, prefix + ".labels", prefix + ".labels must not be empty");
          for (const auto& label : *list) integer(label);
        } else {
          integer(*labels);  // a number-list key also takes one number: a list of one
        }
      } else if (rule == GroupRule::id_range) {
        require(group, &node, prefix, "from", "for rule id_range");
        require(group, &node, prefix, "to", "for rule id_range");
        if (group["from"].value<std::int64_t>().value() > group["to"].value<std::int64_t>().value())
          fail(group.get("to"), prefix + ".to", prefix + ".to must be >= " + prefix + ".from");
      } else if (rule == GroupRule::proportion) {
        require(group, &node, prefix, "share", "for rule proportion");
      }
    }
  }

  // [hierarchy.availability_model]: [availability]'s keys and its model's; then the named edges.
  void check_hierarchy_tables() {
    if (auto* model = root_.at_path("hierarchy.availability_model").node()) {
      const std::string prefix = "hierarchy.availability_model";
      if (!model->is_table()) fail(model, prefix, prefix + " must be a table ([" + prefix + "])");
      auto keys = find_section("availability")->keys;
      const auto chosen_model = model->as_table()->get_as<std::string>("model");
      const toml::table named{{"model", chosen_model ? chosen_model->get() : std::string("always")}};
      for (auto& spec : availability_model(chosen("availability", "model", named)).params)
        keys.push_back(std::move(spec));
      check_plain(prefix, *model->as_table(), keys);
    }
    check_named_edges();
  }

  // [hierarchy.edge.NAME]: each a table of its own link and availability keys. They count the
  // edges: hierarchy.edges left out becomes their count; set, it must agree, or be 0 (flat: the
  // named edges are not used, and the run warns).
  void check_named_edges() {
    auto* edges = root_.at_path("hierarchy.edge").node();
    if (edges == nullptr) return;
    if (!edges->is_table()) fail(edges, "hierarchy.edge", "'hierarchy.edge' must hold tables ([hierarchy.edge.NAME])");
    for (auto&& [k, node] : *edges->as_table()) {
      const std::string prefix = "hierarchy.edge." + std::string(k.str());
      if (!node.is_table()) fail(&node, prefix, prefix + " must be a table ([" + prefix + "])");
      check_plain(prefix, *node.as_table(), edge_profile_schema());
    }
    auto& hierarchy = *root_.get_as<toml::table>("hierarchy");
    const auto named = static_cast<std::int64_t>(edges->as_table()->size());
    const auto set = hierarchy["edges"].value<std::int64_t>().value_or(0);
    if (!edges_set_) {
      hierarchy.insert_or_assign("edges", named);
    } else if (set != 0 && set != named) {
      fail(hierarchy.get("edges"), "hierarchy.edges",
           "hierarchy.edges = " + std::to_string(set) + " but " + std::to_string(named) +
               " edges are named ([hierarchy.edge.NAME]); leave hierarchy.edges out, make them agree, or set 0 for a "
               "flat federation");
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
      using Act = TimelineAction;
      const auto action = choice_from<Act>(entry["action"].value<std::string>().value());
      const bool needs_group = action == Act::offline || action == Act::online || action == Act::speed ||
                               action == Act::leave || action == Act::join || action == Act::move;
      if (action == Act::move) require(entry, &node, prefix, "edge", "for action move (where the group goes)");
      if (needs_group && (action == Act::move || !entry.contains("edge"))) {
        require(entry, &node, prefix, "group", "for action " + name_of(action));
        const auto group = entry["group"].value<std::string>().value();
        if (std::find(group_names.begin(), group_names.end(), group) == group_names.end()) {
          fail(entry.get("group"), prefix + ".group",
               prefix + ": unknown group '" + group + "'" + did_you_mean(group, group_names) +
                   (group_names.empty() ? "; define it as [groups." + group + "]" : "; groups: " + join(group_names)));
        }
      }
      if (action == Act::speed || action == Act::fraction || action == Act::deadline)
        require(entry, &node, prefix, "value", "for action " + name_of(action));
      if (action == Act::speed && entry["value"].value<double>().value_or(0.0) <= 0.0)
        fail(entry.get("value"), prefix + ".value", prefix + ".value (a speed factor) must be > 0");
      if (action == Act::fraction) {
        const double v = entry["value"].value<double>().value_or(0.0);
        if (v <= 0.0 || v > 1.0)
          fail(entry.get("value"), prefix + ".value", prefix + ".value (a fraction) must be in (0, 1]");
      }
      if (action == Act::sampler) {
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
             "sampler.clients_per_round is " + std::to_string(n) + " but there are only " + std::to_string(clients) +
                 " clients (federation.clients)");
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

  ParamValue read(const ParamSpec& spec, const std::string& path, const toml::node& node) const {
    return read_value(spec, path, node, where(&node, path));
  }

  toml::table& root_;
  bool edges_set_ = false;  // the file or --set gives hierarchy.edges
  std::string source_;
  std::set<std::string> overridden_;
  std::vector<std::string> known_paths_;
};

}  // namespace

void validate_scenario_table(toml::table& root, const std::string& source, const std::set<std::string>& overridden) {
  Validator(root, source, overridden).run();
}

}  // namespace drift
