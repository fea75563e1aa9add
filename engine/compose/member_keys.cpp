#include "engine/compose/member_keys.hpp"

#include <algorithm>

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/value_reader.hpp"
#include "engine/config/suggest.hpp"
#include "engine/data/partition.hpp"
#include "engine/population/availability.hpp"
#include "engine/sampling/sampler.hpp"

namespace drift {
namespace {

template <class Rows>
Members members_of_rows(const Rows& rows) {
  Members out;
  for (const auto& row : rows) out.emplace_back(row.name, &row.params);
  return out;
}

std::vector<std::string> no_others(const toml::table&) { return {}; }

// A sampler the timeline switches to brings its keys (an unknown name adds none; the timeline's
// check refuses it).
std::vector<std::string> timeline_samplers(const toml::table& root) {
  std::vector<std::string> names;
  if (const auto* timeline = root.get_as<toml::array>("timeline"))
    for (const auto& node : *timeline)
      if (const auto* entry = node.as_table())
        if (const auto name = (*entry)["sampler"].value<std::string>()) names.push_back(*name);
  return names;
}

// A group's own model brings its keys; the group keeps the global values it does not set.
std::vector<std::string> group_models(const toml::table& root) {
  std::vector<std::string> names;
  if (const auto* groups = root.get_as<toml::table>("groups"))
    for (auto&& [k, node] : *groups)
      if (const auto* group = node.as_table())
        if (const auto name = group->at_path("availability.model").value<std::string>()) names.push_back(*name);
  return names;
}

}  // namespace

// The four sections, once: every question below is answered from this table.
const std::vector<MemberSection>& member_sections() {
  static const std::vector<MemberSection> sections = {
      {"algorithm", "", "this algorithm", false, [] { return members_of_rows(algorithm_catalog()); }, no_others,
       [](const std::vector<std::string>&) { return std::vector<ParamSpec>{}; }},
      {"sampler", "name", "this run's samplers", true, [] { return members_of_rows(sampler_catalog()); },
       timeline_samplers,
       [](const std::vector<std::string>& names) { return params_of_rows(sampler_catalog(), names); }},
      // One scheme, which must exist: its row's lookup names an unknown one with a suggestion.
      {"partition", "scheme", "this scheme", false, [] { return members_of_rows(partition_catalog()); }, no_others,
       [](const std::vector<std::string>& names) { return partition_scheme(names.front()).params; }},
      {"availability", "model", "this run's availability models", true,
       [] { return members_of_rows(availability_catalog()); }, group_models,
       [](const std::vector<std::string>& names) { return params_of_rows(availability_catalog(), names); }},
  };
  return sections;
}

const MemberSection* member_section(const std::string& section) {
  for (const auto& s : member_sections())
    if (s.section == section) return &s;
  return nullptr;
}

std::string member_key(const std::string& section) {
  const auto* s = member_section(section);
  return s != nullptr ? s->member_key : "";
}

std::vector<ParamSpec> member_keys(const std::string& section, const std::string& chosen, const toml::table& root) {
  const auto* s = member_section(section);
  if (s == nullptr) return {};
  std::vector<std::string> names{chosen};
  for (auto& other : s->others_used(root)) names.push_back(std::move(other));
  return s->params_of(names);
}

ParamSet read_member_keys(const std::string& section, const std::string& chosen, const toml::table& root) {
  ParamSet out;
  const auto* table = root[section].as_table();
  for (const auto& spec : member_keys(section, chosen, root)) {
    const std::string path = section + "." + spec.key;
    if (const auto* node = table != nullptr ? table->get(spec.key) : nullptr)
      out.set(spec.key, read_value(spec, path, *node, path));
  }
  return out;
}

std::vector<std::string> idle_member_keys(const std::string& section, const std::string& chosen,
                                          const toml::table& root) {
  std::vector<std::string> out;
  const auto* table = root[section].as_table();
  if (table == nullptr) return out;
  const auto taken = member_keys(section, chosen, root);
  for (auto&& [k, node] : *table) {
    const std::string key(k.str());
    if (std::any_of(taken.begin(), taken.end(), [&](const ParamSpec& p) { return p.key == key; })) continue;
    std::vector<std::string> owners;
    const ParamSpec* spec = nullptr;
    for (const auto& [member, params] : members_of(section))
      for (const auto& p : *params)
        if (p.key == key) {
          owners.push_back(member);
          spec = spec != nullptr ? spec : &p;
        }
    // At its default the key changes nothing for any member: an older resolved scenario, which
    // wrote every model's keys, stays quiet.
    const std::string path = section + "." + key;
    if (spec != nullptr && spec->default_value && read_value(*spec, path, node, path) == *spec->default_value) continue;
    if (!owners.empty())
      out.push_back(section + "." + key + " does nothing: " + section + "." + member_key(section) + " = \"" + chosen +
                    "\" does not take it (" + join(owners) + (owners.size() > 1 ? " do)" : " does)"));
  }
  return out;
}

Members members_of(const std::string& section) {
  const auto* s = member_section(section);
  return s != nullptr ? s->members() : Members{};
}

std::string members_take(const std::string& section, const std::vector<ParamSpec>& taken) {
  std::vector<std::string> names;
  for (const auto& p : taken) names.push_back(p.key);
  const auto* s = member_section(section);
  const std::string whose = s != nullptr ? s->whose : "this section";
  const bool plural = s != nullptr && s->several;
  if (names.empty()) return "; " + whose + (plural ? " take" : " takes") + " no parameters";
  return "; " + whose + (plural ? "' parameters are: " : "'s parameters are: ") + join(names);
}

}  // namespace drift
