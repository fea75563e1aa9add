#include <toml++/toml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/algorithms/algorithm.hpp"
#include "engine/core/error.hpp"
#include "engine/scenario/scenario.hpp"
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

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
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
      if (find_section(name) != nullptr) {
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
      if ((kd == std::string::npos ? known : known.substr(kd + 1)) == leaf) return " (did you mean '" + known + "'?)";
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
    return info ? info->params : std::vector<ParamSpec>{};
  }

  void check_keys(const SectionSpec& section, toml::table& table, const std::vector<ParamSpec>& extra) {
    if (!section.name.empty()) {
      for (auto&& [k, node] : table) {
        const std::string key(k.str());
        if (find_key(section, key, extra) == nullptr) {
          const std::string path = path_of(section.name, key);
          std::string message = "unknown key '" + path + "'" + suggestion(path);
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
        const auto dot = path.find('.');
        const std::string what = dot == std::string::npos ? path : path.substr(0, dot);
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

Scenario build(const toml::table& root, const std::string& source) {
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
  s.clients = static_cast<std::uint32_t>(get<std::int64_t>(root, "federation", "clients"));
  s.rounds = static_cast<std::uint32_t>(get<std::int64_t>(root, "federation", "rounds"));
  s.sampler.name = get<std::string>(root, "sampler", "name");
  if (root["sampler"]["clients_per_round"]) s.sampler.clients_per_round = get<std::int64_t>(root, "sampler", "clients_per_round");
  if (root["sampler"]["fraction"]) s.sampler.fraction = get<double>(root, "sampler", "fraction");
  s.model = get<std::string>(root, "model", "name");
  s.algorithm = get<std::string>(root, "algorithm", "name");
  for (const auto& spec : find_algorithm(s.algorithm)->params) {
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
  s.evaluation.every = get<std::int64_t>(root, "evaluation", "every");
  s.evaluation.batch_size = get<std::int64_t>(root, "evaluation", "batch_size");
  s.evaluation.chunk_size = get<std::int64_t>(root, "evaluation", "chunk_size");
  for (const auto& item : *root["evaluation"]["targets"].as_array())
    s.evaluation.targets.push_back(item.value<double>().value());
  s.cpu_slots = get<std::int64_t>(root, "devices", "cpu_slots");
  s.runs_dir = get<std::string>(root, "output", "runs_dir");

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

std::uint32_t SamplerConfig::cohort_size(std::uint32_t clients) const {
  if (clients_per_round > 0) return static_cast<std::uint32_t>(std::min<std::int64_t>(clients_per_round, clients));
  const auto n = static_cast<std::int64_t>(std::llround(fraction * clients));
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(n, 1, clients));
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
