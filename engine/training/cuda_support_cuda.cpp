// CUDA graphs through LibTorch's at::cuda::CUDAGraph, its sync debug mode, and the device's wait
// mode (cuda_support.hpp). Compiled only against a LibTorch with CUDA.
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/version.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include "engine/training/cuda_support.hpp"

namespace drift {
namespace {

class CudaStepGraph final : public StepGraph {
 public:
  void replay() override { graph.replay(); }
  at::cuda::CUDAGraph graph;
};

}  // namespace

void use_blocking_waits(const c10::Device& device) {
  if (!device.is_cuda()) return;
  // By default CUDA spins while a thread waits, as long as the process has fewer contexts than
  // the machine has cores: each waiting slot then burns a core. The flag applies to the device's
  // context whether or not it exists yet (CUDA 12); where it cannot, the default stays.
  const c10::cuda::CUDAGuard guard(device.index());
  if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) (void)cudaGetLastError();
}

bool step_graphs_supported(const c10::Device& device) {
  // LibTorch 1.x captures in global mode only, where another slot's allocation during a capture
  // would break it.
  return device.is_cuda() && TORCH_VERSION_MAJOR >= 2;
}

GraphPool new_graph_pool() {
  const auto id = at::cuda::graph_pool_handle();
  return {static_cast<std::uint64_t>(id.first), static_cast<std::uint64_t>(id.second)};
}

std::unique_ptr<StepGraph> capture_step(const std::function<void()>& body, const GraphPool& pool) {
  // One capture at a time in the process: captures are rare (one per batch shape and slot), and
  // taking turns keeps the allocator's bookkeeping of captures simple.
  static std::mutex capturing;
  const std::lock_guard<std::mutex> lock(capturing);
  auto out = std::make_unique<CudaStepGraph>();
  // The pool id's type moved between LibTorch versions; graph_pool_handle() names it in all.
  const decltype(at::cuda::graph_pool_handle()) id{pool.first, pool.second};
#if TORCH_VERSION_MAJOR >= 2
  // Thread-local mode: the other slots' threads keep allocating and launching while this one
  // captures; only this thread is barred from calls that would break the capture.
  out->graph.capture_begin(id, cudaStreamCaptureModeThreadLocal);
#else
  out->graph.capture_begin(id);
#endif
  try {
    body();
  } catch (...) {
    // End the capture whatever happened, so the stream and the allocator leave capture mode.
    try {
      out->graph.capture_end();
    } catch (...) {
    }
    throw;
  }
  out->graph.capture_end();
  return out;
}

SyncsForbidden::SyncsForbidden() : previous_(static_cast<int>(c10::cuda::warning_state().get_sync_debug_mode())) {
  c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
}

SyncsForbidden::~SyncsForbidden() {
  c10::cuda::warning_state().set_sync_debug_mode(static_cast<c10::cuda::SyncDebugMode>(previous_));
}

}  // namespace drift
