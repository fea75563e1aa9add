#include "gpu_memory.hpp"

#include <cstdio>

#include "engine/core/error.hpp"
#include "engine/training/cuda_support.hpp"
#include "engine/training/devices.hpp"

namespace drift::cli {

std::uint64_t gib_to_bytes(double gib) { return static_cast<std::uint64_t>(gib * static_cast<double>(1ull << 30)); }

std::string gib_text(double gib) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", gib);
  return text;
}

void check_gpu_memory(double gib, const std::vector<DeviceSlots>& pool, const std::string& pool_source) {
  if (gib <= 0) return;
  for (const auto& d : pool)
    if (d.device.is_cuda()) return;
  throw UserError("--gpu-memory bounds what a run holds of each of its GPUs, but " + pool_source + " (" +
                  describe(pool) + ") has none");
}

void cap_process_gpu_memory(double gib, const std::vector<DeviceSlots>& pool) {
  if (gib <= 0) return;
  for (const auto& d : pool)
    if (d.device.is_cuda()) cap_gpu_memory(d.device.index(), gib_to_bytes(gib));
}

}  // namespace drift::cli
