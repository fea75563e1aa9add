#pragma once
// Declarative description of one scenario key: its type, default, valid range or choices.
// The scenario schema and every algorithm's parameters are lists of these, so validation,
// defaults, `drift list` and the resolved scenario file all come from one place.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace drift {

using ParamValue = std::variant<bool, std::int64_t, double, std::string, std::vector<double>>;

enum class ParamKind { boolean, integer, number, string, number_list };

// "an integer", "a list of numbers": what a key of this kind expects, for error messages.
std::string describe(ParamKind kind);
// A range bound as a person typed it: 0.5, 1e-06, 10.
std::string format_bound(double value);

struct ParamSpec {
  std::string key;  // relative to its section, e.g. "lr" in [training]
  ParamKind kind = ParamKind::number;
  std::optional<ParamValue> default_value;  // nullopt: optional key without a default
  std::optional<double> min;
  bool min_exclusive = false;
  std::optional<double> max;
  std::function<std::vector<std::string>()> choices;  // for names resolved in a registry
  // A string key that also takes a whole number, read as its digits (an edge's name or number).
  bool integer_as_text = false;
  std::string help;
  // A path to a file or folder the member reads (a trace, an index list, a generator): resolved
  // against the scenario's folder (engine/compose/input_files.hpp).
  bool path = false;
  // A path's digest is recorded under this key when the member is the one in use. Empty: none
  // recorded here.
  std::string digest_key;
};

// A key with its type, default (nullopt: optional, no default) and help text.
ParamSpec make_param(std::string key, ParamKind kind, std::optional<ParamValue> def, std::string help);

// Parameters of one component (an algorithm, say), after validation.
class ParamSet {
 public:
  void set(const std::string& key, ParamValue value) { values_[key] = std::move(value); }
  bool has(const std::string& key) const { return values_.count(key) > 0; }
  double number(const std::string& key) const;
  std::int64_t integer(const std::string& key) const;
  bool boolean(const std::string& key) const;
  const std::string& string(const std::string& key) const;
  const std::map<std::string, ParamValue>& values() const { return values_; }

 private:
  const ParamValue& at(const std::string& key) const;
  std::map<std::string, ParamValue> values_;
};

}  // namespace drift
