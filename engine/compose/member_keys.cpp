#include "engine/compose/member_keys.hpp"

#include <algorithm>

#include "engine/algorithms/algorithm.hpp"
#include "engine/compose/value_reader.hpp"
#include "engine/config/suggest.hpp"
#include "engine/data/partition.hpp"
#include "engine/population/availability.hpp"
#include "engine/sampling/sampler.hpp"

namespace drift {

std::string member_key(const std::string& section) {
  if (section == "sampler") return "name";
  if (section == "partition") return "scheme";
  if (section == "availability") return "model";
  return "";
}

std::vector<ParamSpec> member_keys(const std::string& section, const std::string& chosen, const toml::table& root) {
  std::vector<std::string> names{chosen};
  if (section == "sampler") {
    // A sampler the timeline switches to brings its keys (an unknown name adds none; the
    // timeline's check refuses it).
    if (const auto* timeline = root.get_as<toml::array>("timeline"))
      for (const auto& node : *timeline)
        if (const auto* entry = node.as_table())
          if (const auto name = (*entry)["sampler"].value<std::string>()) names.push_back(*name);
    return params_of_rows(sampler_catalog(), names);
  }
  if (section == "availability") {
    // A group's own model brings its keys; the group keeps the global values it does not set.
    if (const auto* groups = root.get_as<toml::table>("groups"))
      for (auto&& [k, node] : *groups)
        if (const auto* group = node.as_table())
          if (const auto name = group->at_path("availability.model").value<std::string>()) names.push_back(*name);
    return params_of_rows(availability_catalog(), names);
  }
  if (section == "partition") return partition_scheme(chosen).params;
  return {};
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

std::vector<std::pair<std::string, const std::vector<ParamSpec>*>> members_of(const std::string& section) {
  std::vector<std::pair<std::string, const std::vector<ParamSpec>*>> out;
  if (section == "algorithm")
    for (const auto& a : algorithm_catalog()) out.emplace_back(a.name, &a.params);
  if (section == "sampler")
    for (const auto& s : sampler_catalog()) out.emplace_back(s.name, &s.params);
  if (section == "partition")
    for (const auto& p : partition_catalog()) out.emplace_back(p.name, &p.params);
  if (section == "availability")
    for (const auto& m : availability_catalog()) out.emplace_back(m.name, &m.params);
  return out;
}

std::string members_take(const std::string& section, const std::vector<ParamSpec>& taken) {
  std::vector<std::string> names;
  for (const auto& p : taken) names.push_back(p.key);
  // The sampler named and the timeline's take keys, and the models of [availability] and of
  // the groups; one algorithm and one scheme do.
  const bool plural = section == "sampler" || section == "availability";
  const std::string whose = section == "sampler"        ? "this run's samplers"
                            : section == "availability" ? "this run's availability models"
                            : section == "partition"    ? "this scheme"
                                                        : "this algorithm";
  if (names.empty()) return "; " + whose + (plural ? " take" : " takes") + " no parameters";
  return "; " + whose + (plural ? "' parameters are: " : "'s parameters are: ") + join(names);
}

}  // namespace drift
