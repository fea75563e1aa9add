#pragma once
// The scenario file's keys, each bound once to the Scenario member it fills
// (engine/config/key_binding.hpp). The table alone gives every key's type, default, range,
// help and when it does nothing; validation, reading, the resolved scenario, `drift list keys`
// and the "does nothing here" warnings all walk it. [algorithm] is open: its keys besides
// `name` come from the chosen algorithm's ParamSpecs.
#include <string>
#include <vector>

#include "engine/config/key_binding.hpp"
#include "engine/config/param_spec.hpp"
#include "engine/config/scenario.hpp"

namespace drift {

struct ScenarioSection {
  std::string name;  // "" for top-level keys; a nested section's name is its path ("data.augment")
  std::string help;
  std::vector<KeyBinding<Scenario>> keys;
};

// Every section in reading order: a key may rely on the sections before it (data.augment's
// preset is stored before the keys that override it).
const std::vector<ScenarioSection>& scenario_sections();

// [profile] and [availability] keys, which a group's [groups.NAME.profile] overrides too.
const std::vector<KeyBinding<ProfileConfig>>& profile_keys();
const std::vector<KeyBinding<AvailabilityConfig>>& availability_keys();
// Keys of one [groups.NAME] table and of one [[timeline]] entry; none has a default.
const std::vector<KeyBinding<GroupConfig>>& group_keys();
const std::vector<KeyBinding<TimelineEntry>>& timeline_keys();

// The specs alone, as the validator reads them.
struct SectionSpec {
  std::string name;
  std::string help;
  std::vector<ParamSpec> keys;
};
const std::vector<SectionSpec>& scenario_schema();
const std::vector<ParamSpec>& group_schema();
const std::vector<ParamSpec>& timeline_schema();

template <class Target>
std::vector<ParamSpec> specs_of(const std::vector<KeyBinding<Target>>& keys) {
  std::vector<ParamSpec> out;
  for (const auto& k : keys) out.push_back(k.spec);
  return out;
}

// "simulation.over_selection does nothing under fedasync (sync rounds only)" for every key
// whose value differs from its default where the scenario makes it idle.
std::vector<std::string> idle_key_warnings(const Scenario& s);

// "federation.rounds", ...: the keys `drift resume --set` may change, in table order.
std::vector<std::string> resumable_keys();

}  // namespace drift
