#pragma once
// A catalogue member's parameters bound to the members of its Options struct (an algorithm's,
// a sampler's; docs/development.md#adding-an-algorithm-parameter). The member is the only
// place a parameter's type and default are written; the table adds the key, the range and the
// help, and the factories receive the Options already read, so no member spells a key twice.
#include <string>
#include <utility>
#include <vector>

#include "engine/config/key_binding.hpp"

namespace drift {

template <class Options>
class ParamTable {
 public:
  ParamTable(std::vector<KeyBinding<Options>> bindings) : bindings_(std::move(bindings)) {}

  std::vector<ParamSpec> specs() const {
    std::vector<ParamSpec> out;
    for (const auto& b : bindings_) out.push_back(b.spec);
    return out;
  }

  // Validation has filled every key (from the file, the preset or the default); a key the
  // set lacks keeps the member's own default.
  Options read(const ParamSet& params) const {
    Options options{};
    for (const auto& b : bindings_)
      if (params.has(b.spec.key)) b.store(options, params.values().at(b.spec.key));
    return options;
  }

  ParamSet write(const Options& options) const {
    ParamSet out;
    for (const auto& b : bindings_) out.set(b.spec.key, b.load(options));
    return out;
  }

  // fn(const Options&, rest...) as a function of (const ParamSet&, rest...), the form
  // catalogue rows' factories, checks and model options take.
  template <class Fn>
  auto reading(Fn fn) const {
    return [table = *this, fn = std::move(fn)](const ParamSet& params, auto&&... rest) {
      return fn(table.read(params), std::forward<decltype(rest)>(rest)...);
    };
  }

 private:
  std::vector<KeyBinding<Options>> bindings_;
};

}  // namespace drift
