#include "engine/scenario/param_spec.hpp"

#include <stdexcept>

namespace drift {

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
