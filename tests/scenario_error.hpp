#pragma once
// The UserError a scenario text (with --set overrides) is refused with: the validation tests'
// one way to ask why a scenario cannot run.
#include <functional>
#include <string>
#include <vector>

#include "catch_torch.hpp"
#include "engine/compose/loader.hpp"
#include "engine/core/error.hpp"

namespace drift::test {

// The one line `f` is refused with (its UserError), or "" when it is not refused.
inline std::string refusal_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

inline std::string error_of(const std::string& text, const std::vector<Override>& overrides = {}) {
  try {
    parse_scenario(text, "s.toml", overrides);
  } catch (const UserError& e) {
    return e.what();
  }
  FAIL("expected a UserError for:\n" << text);
  return "";
}

}  // namespace drift::test
