#pragma once
// Runs one federation in this process: spawns the actors, waits for the last round.
#include <memory>

#include "actors/metrics_sink.hpp"
#include "engine/metrics/run_directory.hpp"
#include "engine/scenario/scenario.hpp"
#include "engine/training/devices.hpp"
#include "engine/training/federation_data.hpp"

namespace drift::actors {

struct FederationOptions {
  std::uint32_t cpu_slots = 1;  // CPU trainer slots when `devices` is empty; results do not depend on it
  std::vector<DeviceSlots> devices;  // the device pool; empty: cpu x cpu_slots
};

// Returns the best test accuracy. Throws std::runtime_error if the run cannot finish.
double run_federation(std::shared_ptr<const Scenario> scenario, std::shared_ptr<const FederationData> data,
                      std::shared_ptr<RunDirectory> directory, std::shared_ptr<RunObserver> observer,
                      const FederationOptions& options);

}  // namespace drift::actors
