// The key table (engine/compose/schema.cpp) is the only declaration of a scenario key: every
// key's default is its member's, every value set is the value read, and the resolved scenario
// (`drift validate --print`) reloads to the same scenario.
#include "catch_torch.hpp"

#include <iomanip>
#include <sstream>

#include "engine/compose/loader.hpp"
#include "engine/compose/schema.hpp"
#include "engine/core/error.hpp"

using namespace drift;

namespace {

std::string path_of(const ScenarioSection& section, const ParamSpec& spec) {
  return section.name.empty() ? spec.key : section.name + "." + spec.key;
}

// Every key of `a` and `b` holds the same value.
void require_same_keys(const Scenario& a, const Scenario& b) {
  for (const auto& section : scenario_sections())
    for (const auto& k : section.keys) {
      INFO(path_of(section, k.spec));
      REQUIRE(k.load(a) == k.load(b));
    }
}

std::string toml_number(double v) {
  std::ostringstream out;
  out << std::setprecision(17) << v;
  const auto text = out.str();
  return text.find_first_of(".e") == std::string::npos ? text + ".0" : text;
}

// A value of the key's type that differs from its default and lies in its range, as TOML;
// "" where the kind has no such value to offer.
std::string other_value(const ParamSpec& spec) {
  const auto& def = *spec.default_value;
  const auto in_range = [&](double v) {
    return (!spec.max || v <= *spec.max) && (!spec.min || (spec.min_exclusive ? v > *spec.min : v >= *spec.min));
  };
  switch (spec.kind) {
    case ParamKind::boolean:
      return std::get<bool>(def) ? "false" : "true";
    case ParamKind::integer: {
      const auto d = std::get<std::int64_t>(def);
      return std::to_string(in_range(static_cast<double>(d + 1)) ? d + 1 : d - 1);
    }
    case ParamKind::number: {
      const double d = std::get<double>(def);
      return toml_number(in_range(d + 0.25) ? d + 0.25 : d - 0.25);
    }
    case ParamKind::string: {
      if (!spec.choices) return "\"x\"";
      for (const auto& c : spec.choices())
        if (c != std::get<std::string>(def)) return "\"" + c + "\"";
      return "";
    }
    case ParamKind::number_list:
      return "[" + toml_number(spec.max ? *spec.max / 2 : 10.0) + "]";
  }
  return "";
}

}  // namespace

TEST_CASE("every key's default is its member's and survives the resolved scenario", "[scenario][keys]") {
  const Scenario s = parse_scenario("", "empty.toml");
  std::size_t defaults = 0;
  for (const auto& section : scenario_sections())
    for (const auto& k : section.keys) {
      if (!k.spec.default_value) continue;
      INFO(path_of(section, k.spec));
      REQUIRE(k.load(s) == *k.spec.default_value);
      ++defaults;
    }
  CHECK(defaults > 75);
  require_same_keys(s, parse_scenario(s.resolved_toml, "resolved.toml"));
}

TEST_CASE("every key set to another value is read into its member and reloads from --print", "[scenario][keys]") {
  std::size_t read = 0, refused = 0;
  for (const auto& section : scenario_sections())
    for (const auto& k : section.keys) {
      if (!k.spec.default_value) continue;
      const auto value = other_value(k.spec);
      if (value.empty()) continue;
      const auto path = path_of(section, k.spec);
      INFO(path << " = " << value);
      Scenario s;
      try {
        s = parse_scenario("", "s.toml", {parse_override(path + "=" + value)});
      } catch (const UserError&) {
        ++refused;  // valid alone, but not with the other keys' defaults (partition.file, say)
        continue;
      }
      REQUIRE(k.load(s) != *k.spec.default_value);
      require_same_keys(s, parse_scenario(s.resolved_toml, "resolved.toml"));
      ++read;
    }
  CHECK(read > 70);
  CHECK(refused < 10);
}

TEST_CASE("a key missing from the table cannot be read", "[scenario][keys]") {
  REQUIRE_THROWS_WITH(parse_scenario("[simulation]\nover_selektion = 2.0\n", "s.toml"),
                      Catch::Contains("unknown key 'simulation.over_selektion'") &&
                          Catch::Contains("did you mean 'simulation.over_selection'"));
  REQUIRE_THROWS_WITH(parse_scenario("[profile]\nspeed = 10.0\nbandwidth = 5.0\n", "s.toml"),
                      Catch::Contains("s.toml:3:1: unknown key 'profile.bandwidth'"));
}

TEST_CASE("a key set where the scenario makes it idle is named with the reason", "[scenario][keys]") {
  const auto warnings =
      parse_scenario("[simulation]\nmode = \"fedbuff\"\n[async]\nstaleness_a = 2.0\nalpha = 0.3\n", "s.toml").warnings;
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0] ==
        "async.alpha does nothing under fedbuff (FedAsync's; FedBuff weighs an update by 1/sqrt(1 + staleness))");
  CHECK(warnings[1].rfind("async.staleness_a does nothing under fedbuff", 0) == 0);
  CHECK(parse_scenario("[async]\nbuffer_size = 3\n", "s.toml").warnings ==
        std::vector<std::string>{
            "async.buffer_size does nothing under sync rounds (simulation.mode = fedasync or fedbuff)"});
  CHECK(parse_scenario("[simulation]\nmode = \"fedbuff\"\n[async]\nbuffer_size = 3\n", "s.toml").warnings.empty());
  CHECK(parse_scenario("[training]\nlocal_steps = 5\nlocal_epochs = 2\n", "s.toml").warnings ==
        std::vector<std::string>{"training.local_epochs does nothing with training.local_steps (steps take full "
                                 "batches from reshuffled passes)"});
  CHECK(parse_scenario("[training]\nlocal_steps = 0\nlocal_epochs = 2\n", "s.toml").warnings.empty());
}
