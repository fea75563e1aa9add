#pragma once
// How long `drift run` will take on this machine's CPU slots, from a few timed training steps
// of the scenario's model on its own data: a rough guide printed by `drift validate` beside
// the virtual-time estimate, which a new user would otherwise read as wall time.
#include <cstdint>
#include <string>

#include "engine/compose/federation_data.hpp"
#include "engine/models/model.hpp"
#include "engine/tensors/named_tensors.hpp"

namespace drift::cli {

struct WallEstimate {
  double seconds = 0.0;       // the run's training, on `slots` CPU slots
  double step_seconds = 0.0;  // one local step of the model, one thread
  std::uint32_t slots = 0;
  std::string not_estimated;  // why there is no estimate (a GPU pool, say); empty when there is
};

// The bytes of `state` as a task carries them (the estimates' model size).
std::uint64_t bytes_of(const NamedTensors& state);

// Trains `model` for a few steps (its weights change: use a model nothing else needs).
// `round_seconds` is a round's virtual length (RoundEstimate), at which the clients' availability
// is sampled to count who can train.
WallEstimate estimate_wall_time(const Scenario& scenario, const FederationData& data, Model& model,
                                double round_seconds);

}  // namespace drift::cli
