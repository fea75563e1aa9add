#pragma once
// One configuration key bound to the struct member it fills (docs/development.md#adding-a-scenario-key).
// The member is the only place its type and default are written: bind_key() derives the key's
// kind, default and, for an enum, its choices from it, so the table of keys adds only the
// name, the range, the help and when the key does nothing.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/config/choices.hpp"
#include "engine/config/param_spec.hpp"

namespace drift {

template <class Target>
struct KeyBinding {
  ParamSpec spec;
  std::function<void(Target&, const ParamValue&)> store;  // a validated value into the member
  std::function<ParamValue(const Target&)> load;          // the member as a value
  // Why the key does nothing in this target ("under fedbuff (FedAsync's)"), or "" where it acts.
  std::function<std::string(const Target&)> idle;
  // `drift resume --set` may change it: it decides only what happens from now on (how long the
  // run goes, when it checkpoints, where it trains) or how the summary reads the results.
  bool resumable = false;

  KeyBinding&& range(std::optional<double> min, std::optional<double> max, bool min_exclusive = false) && {
    spec.min = min;
    spec.max = max;
    spec.min_exclusive = min_exclusive;
    return std::move(*this);
  }
  // A key without a default: the member keeps its own value unless the file sets the key.
  KeyBinding&& optional() && {
    spec.default_value.reset();
    return std::move(*this);
  }
  KeyBinding&& choices(std::function<std::vector<std::string>()> names) && {
    spec.choices = std::move(names);
    return std::move(*this);
  }
  KeyBinding&& or_number() && {
    spec.integer_as_text = true;
    return std::move(*this);
  }
  KeyBinding&& may_change_on_resume() && {
    resumable = true;
    return std::move(*this);
  }
  KeyBinding&& idle_when(std::function<std::string(const Target&)> why) && {
    idle = std::move(why);
    return std::move(*this);
  }
};

namespace binding_detail {

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

template <class T>
constexpr ParamKind kind_of() {
  if constexpr (std::is_same_v<T, bool>)
    return ParamKind::boolean;
  else if constexpr (std::is_integral_v<T>)
    return ParamKind::integer;
  else if constexpr (std::is_floating_point_v<T>)
    return ParamKind::number;
  else if constexpr (is_vector<T>::value)
    return ParamKind::number_list;
  else
    return ParamKind::string;  // std::string, or an enum spelt by its ChoiceNames
}

template <class T>
ParamValue to_value(const T& v) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double> || std::is_same_v<T, std::string>)
    return v;
  else if constexpr (std::is_integral_v<T>)
    return static_cast<std::int64_t>(v);
  else if constexpr (std::is_enum_v<T>)
    return name_of(v);
  else
    return std::vector<double>(v.begin(), v.end());
}

template <class T>
T from_value(const ParamValue& value) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
    return std::get<T>(value);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(std::get<std::int64_t>(value));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) return static_cast<T>(*i);
    return static_cast<T>(std::get<double>(value));
  } else if constexpr (std::is_enum_v<T>) {
    return choice_from<T>(std::get<std::string>(value));
  } else {
    const auto& list = std::get<std::vector<double>>(value);
    T out;
    for (double d : list) out.push_back(static_cast<typename T::value_type>(d));
    return out;
  }
}

// One default-constructed Target for all its keys' defaults (a local copy per key also trips
// GCC 12's -Wmaybe-uninitialized on a vector member's inlined destructor). Made once and never
// destroyed: GCC 14 warns the same way about a map member's destructor inlined into the
// cleanup of a static local's construction.
template <class Target>
const Target& defaults_of() {
  static const Target* const defaults = new Target{};
  return *defaults;
}

// target.*m1.*m2...; const when the target is.
template <class Target, class... Members>
auto& member_of(Target& target, Members... members) {
  return (target.*....*members);
}

}  // namespace binding_detail

// `key` bound to target.*m1.*m2...: its kind and default come from the member of a
// default-constructed Target, and an enum member takes its names as the key's choices.
template <class Target, class... Members>
KeyBinding<Target> bind_key(std::string key, std::string help, Members... members) {
  using Member = std::decay_t<decltype(binding_detail::member_of(std::declval<Target&>(), members...))>;
  KeyBinding<Target> b;
  b.spec =
      make_param(std::move(key), binding_detail::kind_of<Member>(),
                 binding_detail::to_value(binding_detail::member_of(binding_detail::defaults_of<Target>(), members...)),
                 std::move(help));
  if constexpr (std::is_enum_v<Member>) b.spec.choices = choice_names<Member>;
  b.store = [members...](Target& t, const ParamValue& v) {
    binding_detail::member_of(t, members...) = binding_detail::from_value<Member>(v);
  };
  b.load = [members...](const Target& t) { return binding_detail::to_value(binding_detail::member_of(t, members...)); };
  return b;
}

// `binding`'s key names a file or folder, relative to the scenario (ParamSpec::path).
template <class Target>
KeyBinding<Target> input_path(KeyBinding<Target> binding) {
  binding.spec.path = true;
  return binding;
}

// `binding`'s key names a file or folder its member reads, whose digest is recorded under
// `digest_key` (ParamSpec::digest_key).
template <class Target>
KeyBinding<Target> input_file(KeyBinding<Target> binding, std::string digest_key) {
  binding.spec.digest_key = std::move(digest_key);
  return input_path(std::move(binding));
}

// A key whose value is not the member's type (a comma-separated list, a scope word): the
// caller writes how it is stored and loaded, and gives its kind and default.
template <class Target>
KeyBinding<Target> bind_custom_key(std::string key, std::string help, ParamKind kind, std::optional<ParamValue> def,
                                   std::function<void(Target&, const ParamValue&)> store,
                                   std::function<ParamValue(const Target&)> load) {
  KeyBinding<Target> b;
  b.spec = make_param(std::move(key), kind, std::move(def), std::move(help));
  b.store = std::move(store);
  b.load = std::move(load);
  return b;
}

// The bindings of a sub-struct (a profile) lifted onto the struct that holds it.
template <class Outer, class Inner>
KeyBinding<Outer> lift(const KeyBinding<Inner>& inner, Inner Outer::*member) {
  KeyBinding<Outer> b;
  b.spec = inner.spec;
  b.store = [store = inner.store, member](Outer& o, const ParamValue& v) { store(o.*member, v); };
  b.load = [load = inner.load, member](const Outer& o) { return load(o.*member); };
  return b;
}

}  // namespace drift
