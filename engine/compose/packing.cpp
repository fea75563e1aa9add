#include "engine/compose/packing.hpp"

#include "engine/algorithms/algorithm.hpp"
#include "engine/training/packed_model.hpp"

namespace drift {

std::string pack_refusal(const Scenario& s) {
  const auto* algorithm = find_algorithm(s.algorithm);
  if (algorithm == nullptr) return "unknown algorithm '" + s.algorithm + "'";
  if (!algorithm->packed)
    return s.algorithm + " does not pack (its local objective is more than cross-entropy, or its clients keep state)";
  if (s.model_group.size() > 1) return "a [model] group gives clients different architectures, which do not pack";
  if (persistent_pass(s.training))
    return "training.local_steps_pass = \"persistent\" keeps each client's place in its pass in its state, which a "
           "pack does not carry";
  ModelOptions options;
  if (algorithm->model_options) options = algorithm->model_options(s.algorithm_params);
  options.feature_dim = s.feature_dim;
  return packing_refusal(s.model, options);
}

std::uint32_t effective_pack(const Scenario& s) { return s.pack > 1 && pack_refusal(s).empty() ? s.pack : 1; }

}  // namespace drift
