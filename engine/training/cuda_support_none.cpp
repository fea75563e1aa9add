// The stand-in for a LibTorch without CUDA: nothing is captured, so every step runs eagerly,
// and nothing is checked (cuda_support.hpp).
#include <stdexcept>

#include "engine/training/cuda_support.hpp"

namespace drift {

void use_blocking_waits(const c10::Device&) {}

std::uint64_t gpu_total_memory(int) { return 0; }

void cap_gpu_memory(int, std::uint64_t) {}

bool step_graphs_supported(const c10::Device&) { return false; }

GraphPool new_graph_pool() { return {0, 0}; }

std::unique_ptr<StepGraph> capture_step(const std::function<void()>&, const GraphPool&) {
  throw std::runtime_error("this drift is linked against a LibTorch without CUDA graphs");
}

GpuWorkScope::GpuWorkScope(const c10::Device&) {}
GpuWorkScope::~GpuWorkScope() = default;

SyncsForbidden::SyncsForbidden() = default;
SyncsForbidden::~SyncsForbidden() = default;

}  // namespace drift
