// Every algorithm parameter is declared once, bound to a member of its algorithm's Options
// (engine/algorithms/param_table.hpp): the defaults of every preset come back as they went in,
// and so does a value off the default for each key in turn, which fails when two keys share a member, a
// key fills nothing, or an enum's names differ from the key's choices.
#include "catch_torch.hpp"

#include <algorithm>
#include <cmath>

#include "engine/algorithms/algorithm.hpp"

using namespace drift;

namespace {

double number_of(const ParamValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

// A valid value other than the default: within the range, another choice, another word.
ParamValue off_default(const ParamSpec& spec) {
  const auto& def = *spec.default_value;
  switch (spec.kind) {
    case ParamKind::boolean:
      return !std::get<bool>(def);
    case ParamKind::integer: {
      auto v = std::get<std::int64_t>(def) + 1;
      if (spec.max && static_cast<double>(v) > *spec.max) v -= 2;
      return v;
    }
    case ParamKind::number: {
      const double v = number_of(def);
      double other = v + 0.25 * (std::abs(v) + 1.0);
      if (spec.max && other > *spec.max) other = (v + spec.min.value_or(v - 1.0)) / 2.0;
      return other;
    }
    case ParamKind::string: {
      const auto& word = std::get<std::string>(def);
      if (!spec.choices) return word + "-other";
      for (const auto& choice : spec.choices())
        if (choice != word) return choice;
      return word;
    }
    case ParamKind::number_list: {
      auto list = std::get<std::vector<double>>(def);
      list.push_back(1.5);
      return list;
    }
  }
  return def;
}

// The keys whose values differ between the two sets (or that only one holds).
std::vector<std::string> differing_keys(const ParamSet& a, const ParamSet& b) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : a.values())
    if (!b.has(key) || !(b.values().at(key) == value)) keys.push_back(key);
  for (const auto& [key, value] : b.values())
    if (!a.has(key)) keys.push_back(key);
  return keys;
}

std::vector<std::string> preset_names(const AlgorithmInfo& info) {
  std::vector<std::string> names{""};
  for (const auto& p : info.presets) names.push_back(p.name);
  return names;
}

}  // namespace

TEST_CASE("every algorithm parameter round-trips through its Options member", "[algorithms][params]") {
  for (const auto& info : algorithm_catalog()) {
    if (info.params.empty()) continue;
    INFO(info.name);
    REQUIRE(info.echo_params);
    for (const auto& preset : preset_names(info)) {
      INFO("preset '" << preset << "'");
      ParamSet defaults;
      std::vector<ParamSpec> specs;
      for (const auto& spec : algorithm_params(info, preset)) {
        if (spec.key == "preset") continue;
        REQUIRE(spec.default_value);
        defaults.set(spec.key, *spec.default_value);
        specs.push_back(spec);
      }
      CHECK(differing_keys(info.echo_params(defaults), defaults).empty());
      // One key off its default at a time: a key sharing a member with another, or filling
      // nothing, comes back with a set that differs.
      for (const auto& spec : specs) {
        INFO("key " << spec.key);
        auto changed = defaults;
        changed.set(spec.key, off_default(spec));
        CHECK(differing_keys(changed, defaults) == std::vector<std::string>{spec.key});
        CHECK(differing_keys(info.echo_params(changed), changed).empty());
      }
    }
  }
}

TEST_CASE("every preset names only parameters of its algorithm", "[algorithms][params]") {
  for (const auto& info : algorithm_catalog())
    for (const auto& preset : info.presets)
      for (const auto& entry : preset.values) {
        const std::string& key = entry.first;  // a lambda may not capture a structured binding in C++17
        INFO(info.name << " preset " << preset.name << " key " << key);
        CHECK(std::any_of(info.params.begin(), info.params.end(), [&](const auto& p) { return p.key == key; }));
      }
}

TEST_CASE("a closed choice of an algorithm lists its enum's names", "[algorithms][params]") {
  const auto params = find_algorithm("fedskc")->params;
  const auto mode = std::find_if(params.begin(), params.end(), [](const auto& p) { return p.key == "gpr_mode"; });
  REQUIRE(mode != params.end());
  REQUIRE(mode->choices);
  CHECK(mode->choices() == std::vector<std::string>{"literal", "convex"});
  CHECK(std::get<std::string>(*mode->default_value) == "literal");
}
