#include "engine/compose/value_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "engine/config/suggest.hpp"
#include "engine/core/error.hpp"

namespace drift {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& message) {
  throw UserError(where + ": " + message);
}

// Finite, and within the key's bounds; an integer key without its own upper bound still has
// its C++ type's: every count drift keeps fits in 32 bits, so a larger value would wrap (the
// 64-bit ones set their own bound).
// `shown` is the value as the message writes it: an integer's digits, exactly.
void check_range(const ParamSpec& spec, const std::string& path, const std::string& where, double v,
                 const std::string& shown) {
  constexpr double kIntegerMax = 2147483647.0;
  // A plain double (no optional): GCC 12 at -O3 took the optional's copy for uninitialised.
  const bool bounded = spec.max.has_value() || spec.kind == ParamKind::integer;
  const double max = spec.max.value_or(kIntegerMax);
  if (std::isnan(v)) fail(where, path + " must be a number, not nan");
  if (std::isinf(v)) fail(where, path + " must be a finite number, not " + (v > 0 ? "inf" : "-inf"));
  if (spec.min && (spec.min_exclusive ? v <= *spec.min : v < *spec.min)) {
    fail(where, path + " must be " + (spec.min_exclusive ? "> " : ">= ") + format_bound(*spec.min) + ", got " + shown);
  }
  if (bounded && v > max) fail(where, path + " must be <= " + format_bound(max) + ", got " + shown);
}

}  // namespace

ParamValue read_value(const ParamSpec& spec, const std::string& path, const toml::node& node,
                      const std::string& where) {
  auto wrong_type = [&]() {
    std::ostringstream got;
    got << node.type();
    fail(where, path + " must be " + describe(spec.kind) + (spec.integer_as_text ? " or a whole number" : "") +
                    ", not " + got.str());
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
      // Past 2^53 an integer has no exact double: it would be used as a different number.
      if (node.is_integer() && std::llabs(node.as_integer()->get()) > (std::int64_t{1} << 53))
        fail(where, path + " = " + std::to_string(node.as_integer()->get()) +
                        " is too large to be used exactly; write it as a float (e.g. 1e18)");
      if (node.is_integer())
        value = static_cast<double>(node.as_integer()->get());
      else if (node.is_floating_point())
        value = node.as_floating_point()->get();
      else
        wrong_type();
      break;
    case ParamKind::string:
      if (spec.integer_as_text && node.is_integer()) {
        value = std::to_string(node.as_integer()->get());
        break;
      }
      if (!node.is_string()) wrong_type();
      value = node.as_string()->get();
      break;
    case ParamKind::number_list: {
      std::vector<double> list;
      // One number is a list of one (data.augment.mean = 0.5 for one-channel images).
      if (node.is_integer()) list.push_back(static_cast<double>(node.as_integer()->get()));
      if (node.is_floating_point()) list.push_back(node.as_floating_point()->get());
      if (!list.empty()) {
        value = list;
        break;
      }
      if (!node.is_array()) wrong_type();
      for (const auto& item : *node.as_array()) {
        if (item.is_integer())
          list.push_back(static_cast<double>(item.as_integer()->get()));
        else if (item.is_floating_point())
          list.push_back(item.as_floating_point()->get());
        else
          wrong_type();
      }
      value = list;
      break;
    }
  }
  if (auto* i = std::get_if<std::int64_t>(&value))
    check_range(spec, path, where, static_cast<double>(*i), std::to_string(*i));
  if (auto* d = std::get_if<double>(&value)) check_range(spec, path, where, *d, format_bound(*d));
  if (auto* l = std::get_if<std::vector<double>>(&value))
    for (double d : *l) check_range(spec, path, where, d, format_bound(d));
  if (spec.choices) {
    const auto& s = std::get<std::string>(value);
    const auto options = spec.choices();
    if (std::find(options.begin(), options.end(), s) == options.end()) {
      // "unknown dataset 'x'", "unknown action 'x'"; for a section's `name`, the section:
      // "unknown algorithm 'x'".
      const auto dot = path.rfind('.');
      const std::string leaf = dot == std::string::npos ? path : path.substr(dot + 1);
      const auto section_start = path.rfind('.', dot == std::string::npos ? 0 : dot - 1);
      const std::string section =
          dot == std::string::npos
              ? path
              : path.substr(section_start == std::string::npos || section_start >= dot ? 0 : section_start + 1,
                            dot - (section_start == std::string::npos || section_start >= dot ? 0 : section_start + 1));
      const std::string what = leaf == "name" ? section : leaf;
      fail(where, "unknown " + what + " '" + s + "'" + did_you_mean(s, options) + "; choose one of: " + join(options));
    }
  }
  return value;
}

}  // namespace drift
