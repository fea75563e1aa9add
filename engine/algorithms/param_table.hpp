#pragma once
// An algorithm's parameters bound to the members of its Options struct
// (docs/development.md#adding-an-algorithm-parameter). The member is the only place a
// parameter's type and default are written; the table adds the key, the range and the help,
// and the factories receive the Options already read, so no algorithm spells a key twice.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
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
  // AlgorithmInfo's factories, checks and model options take.
  template <class Fn>
  auto reading(Fn fn) const {
    return [table = *this, fn = std::move(fn)](const ParamSet& params, auto&&... rest) {
      return fn(table.read(params), std::forward<decltype(rest)>(rest)...);
    };
  }

 private:
  std::vector<KeyBinding<Options>> bindings_;
};

// The five members every algorithm has, its parameters declared once in `params`.
template <class Options, class ClientFn, class ServerFn>
AlgorithmInfo algorithm_info(std::string name, std::string description, const ParamTable<Options>& params,
                             ClientFn client, ServerFn server) {
  AlgorithmInfo info(std::move(name), std::move(description), params.specs(), params.reading(std::move(client)),
                     params.reading(std::move(server)));
  info.echo_params = [params](const ParamSet& p) { return params.write(params.read(p)); };
  return info;
}

}  // namespace drift
