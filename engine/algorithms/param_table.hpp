#pragma once
// An algorithm's row made from its ParamTable (engine/config/param_table.hpp).
#include <string>
#include <utility>

#include "engine/algorithms/algorithm.hpp"
#include "engine/config/param_table.hpp"

namespace drift {

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
