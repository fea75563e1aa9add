#pragma once
// --gpu-memory GIB: what a run (drift run, each run of a study) or a worker may hold of each of
// its GPUs, so that runs sharing a GPU cannot starve each other (docs/devices.md#studies-on-gpus).
#include <cstdint>
#include <string>
#include <vector>

namespace drift {
struct DeviceSlots;
}

namespace drift::cli {

std::uint64_t gib_to_bytes(double gib);
std::string gib_text(double gib);  // as a flag takes it back: "7.5"

// Throws UserError when `gib` (> 0) is given for a pool without a GPU: it would bound nothing.
void check_gpu_memory(double gib, const std::vector<DeviceSlots>& pool, const std::string& pool_source);

// Caps this process at `gib` on each GPU of the pool (nothing for 0).
void cap_process_gpu_memory(double gib, const std::vector<DeviceSlots>& pool);

}  // namespace drift::cli
