// CUDA graphs through LibTorch's at::cuda::CUDAGraph, its sync debug mode, and the device's wait
// mode (cuda_support.hpp). Compiled only against a LibTorch with CUDA.
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/version.h>

#include <algorithm>
#include <condition_variable>
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

// Threads working on GPUs share the gate; a capture takes it alone (GpuWorkScope). A pending
// capture holds new workers off, so that slots starting job after job cannot starve it.
class CaptureGate {
 public:
  void enter() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !capturing_; });
    ++workers_;
  }
  void leave() {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (--workers_ == 0) changed_.notify_all();
  }
  void begin_capture() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !capturing_; });
    capturing_ = true;
    changed_.wait(lock, [&] { return workers_ == 0; });
  }
  void end_capture() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      capturing_ = false;
    }
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int workers_ = 0;
  bool capturing_ = false;
};

CaptureGate& capture_gate() {
  static CaptureGate gate;
  return gate;
}

thread_local int work_scopes = 0;  // GpuWorkScopes the calling thread holds

// A capture with the gate to itself; the calling thread's own share set aside meanwhile.
class CaptureTurn {
 public:
  CaptureTurn() : own_(work_scopes > 0) {
    if (own_) capture_gate().leave();
    capture_gate().begin_capture();
  }
  ~CaptureTurn() {
    capture_gate().end_capture();
    if (own_) capture_gate().enter();
  }
  CaptureTurn(const CaptureTurn&) = delete;
  CaptureTurn& operator=(const CaptureTurn&) = delete;

 private:
  bool own_;
};

}  // namespace

GpuWorkScope::GpuWorkScope(const c10::Device& device) : held_(device.is_cuda()) {
  if (!held_) return;
  capture_gate().enter();
  ++work_scopes;
}

GpuWorkScope::~GpuWorkScope() {
  if (!held_) return;
  --work_scopes;
  capture_gate().leave();
}

void use_blocking_waits(const c10::Device& device) {
  if (!device.is_cuda()) return;
  // By default CUDA spins while a thread waits, as long as the process has fewer contexts than
  // the machine has cores: each waiting slot then burns a core. The flag applies to the device's
  // context whether or not it exists yet (CUDA 12); where it cannot, the default stays.
  const c10::cuda::CUDAGuard guard(device.index());
  if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) (void)cudaGetLastError();
}

std::uint64_t gpu_total_memory(int index) {
  const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
  std::size_t free = 0;
  std::size_t total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return total;
}

void cap_gpu_memory(int index, std::uint64_t bytes) {
  const auto total = gpu_total_memory(index);
  if (total == 0) return;
  const double fraction = std::min(1.0, static_cast<double>(bytes) / static_cast<double>(total));
  c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, static_cast<c10::DeviceIndex>(index));
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
  // One capture at a time in the process, and no other GPU work meanwhile (GpuWorkScope).
  const CaptureTurn turn;
  auto out = std::make_unique<CudaStepGraph>();
  // The pool id's type moved between LibTorch versions; graph_pool_handle() names it in all.
  const decltype(at::cuda::graph_pool_handle()) id{pool.first, pool.second};
#if TORCH_VERSION_MAJOR >= 2
  // Thread-local mode: only this thread is barred from calls that would break the capture; the
  // other slots wait at the gate.
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
