#include "engine/config/param_spec.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace drift {

ParamSpec make_param(std::string key, ParamKind kind, std::optional<ParamValue> def, std::string help) {
  ParamSpec s;
  s.key = std::move(key);
  s.kind = kind;
  s.default_value = std::move(def);
  s.help = std::move(help);
  return s;
}

std::string describe(ParamKind kind) {
  switch (kind) {
    case ParamKind::boolean:
      return "a boolean (true or false)";
    case ParamKind::integer:
      return "an integer";
    case ParamKind::number:
      return "a number";
    case ParamKind::string:
      return "a string";
    case ParamKind::number_list:
      return "a list of numbers";
  }
  return "?";
}

std::string format_bound(double value) {
  std::ostringstream out;
  // Whole numbers in full ("2147483647", not "2.14748e+09"), as a user would type them.
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e16)
    out << std::fixed << std::setprecision(0);
  out << value;
  return out.str();
}

const ParamValue& ParamSet::at(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw std::out_of_range("parameter '" + key + "' is not set");
  return it->second;
}

double ParamSet::number(const std::string& key) const {
  const auto& v = at(key);
  if (auto i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

std::int64_t ParamSet::integer(const std::string& key) const { return std::get<std::int64_t>(at(key)); }
bool ParamSet::boolean(const std::string& key) const { return std::get<bool>(at(key)); }
const std::string& ParamSet::string(const std::string& key) const { return std::get<std::string>(at(key)); }

}  // namespace drift
