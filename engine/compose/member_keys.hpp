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
std::vector<std::pair<std::string, const std::vector<ParamSpec>*>> members_of(const std::string& section);

// "; this run's samplers' parameters are: candidates", or "; this scheme takes no parameters":
// what the section takes here, for a message about a key it does not.
std::string members_take(const std::string& section, const std::vector<ParamSpec>& taken);

}  // namespace drift
