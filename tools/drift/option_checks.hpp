#pragma once
// Checks of numeric command-line options that say what the option takes. CLI11's own name a
// non-negative number's range up to the largest double (309 digits), and call 1e3 "not in
// range" for an integer option where it is no integer at all.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <string>

namespace drift::cli {

// A whole number from `min` to `max`, written as digits (1e3 is refused as no whole number).
inline CLI::Validator whole_number(std::int64_t min, std::int64_t max) {
  const auto range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [=](std::string& text) {
        std::int64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        const bool whole = !text.empty() && error == std::errc() && end == text.data() + text.size();
        if (whole && value >= min && value <= max) return std::string();
        return "a whole number from " + range + ", not " + text;
      },
      "INT in [" + range + "]");
}

// A number in [min, max] (above `min`, not at it, when `above_min`); refused as "a number of
// WHAT RANGE, not TEXT", with RANGE as the caller words it.
inline CLI::Validator number_of(const std::string& what, const std::string& type, double min, double max,
                                const std::string& range, bool above_min = false) {
  return CLI::Validator(
      [=](std::string& text) {
        std::size_t used = 0;
        double value = min - 1;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        const bool low_ok = above_min ? value > min : value >= min;
        if (used == text.size() && low_ok && value <= max) return std::string();
        return "a number of " + what + " " + range + ", not " + text;
      },
      type);
}

// A number of seconds, 0 or more (0 where the option says it means forever).
inline CLI::Validator seconds() { return number_of("seconds", "SECONDS", 0, 1e9, "from 0 to 1e9"); }

// GiB of memory, above 0 (--gpu-memory).
inline CLI::Validator gibibytes() { return number_of("GiB", "GIB", 0, 1e6, "above 0 and up to 1e6", true); }

}  // namespace drift::cli
