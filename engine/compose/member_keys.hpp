#pragma once
// Sections whose keys, beside their own, come from the catalogue members a scenario uses
// (docs/development.md): [algorithm] the algorithm's, [sampler] the samplers', [partition] the
// scheme's, [availability] the availability models'. Validation asks here what they take.
#include <toml++/toml.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/config/param_spec.hpp"

namespace drift {

// Every member of a family, with its keys.
using Members = std::vector<std::pair<std::string, const std::vector<ParamSpec>*>>;

// A section whose members come from a catalogue: the one place that says how it names its member
// and which other members of the scenario bring their keys into it.
struct MemberSection {
  std::string section;     // "sampler"
  std::string member_key;  // the key naming its member ("name"); "" for [algorithm], whose presets
                           // make it the validator's own case
  std::string whose;       // "this run's samplers": messages about what it takes
  bool several = false;    // members besides the chosen one can bring keys (a timeline's samplers)
  Members (*members)();
  std::vector<std::string> (*others_used)(const toml::table& root);            // those other members' names
  std::vector<ParamSpec> (*params_of)(const std::vector<std::string>& names);  // chosen first; each key once
};

// [algorithm], [sampler], [partition] and [availability], in that order.
const std::vector<MemberSection>& member_sections();
const MemberSection* member_section(const std::string& section);  // null for a plain section

// The key that names a section's member ("name", "scheme", "model"); "" for [algorithm] (its
// presets make it the validator's own case) and for plain sections.
std::string member_key(const std::string& section);

// What `section` takes beside its own keys when it names `chosen`: the sampler's keys and those
// of the samplers the timeline switches to, the scheme's, or the availability model's and those
// of the groups' own models (read from `root`). Each key once.
std::vector<ParamSpec> member_keys(const std::string& section, const std::string& chosen, const toml::table& root);

// The values of member_keys() in the validated table of `section` (validation wrote every
// default), for the Scenario: each member's row reads its own from them.
ParamSet read_member_keys(const std::string& section, const std::string& chosen, const toml::table& root);

// "sampler.strata does nothing: sampler.name = \"uniform\" does not take it (cyclic does)": one
// warning per key of the section's table that only members the run does not use take, set to
// something other than its default.
std::vector<std::string> idle_member_keys(const std::string& section, const std::string& chosen,
                                          const toml::table& root);

// Every member of the section's family, with its keys; empty for a plain section.
Members members_of(const std::string& section);

// "; this run's samplers' parameters are: candidates", or "; this scheme takes no parameters":
// what the section takes here, for a message about a key it does not.
std::string members_take(const std::string& section, const std::vector<ParamSpec>& taken);

}  // namespace drift
