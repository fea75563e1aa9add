#pragma once
// What drift needs from CUDA's own API, behind a header that needs no CUDA: graphs of a training
// step, the check that a loop never waits for the device, and how a waiting thread waits. A build
// against a LibTorch with CUDA compiles cuda_support_cuda.cpp; any other compiles
// cuda_support_none.cpp, which captures nothing (callers then train eagerly) and checks nothing
// (docs/performance.md#cuda-graphs).
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace drift {

// Makes host threads that wait for `device` (the one wait at the end of a job, say) sleep
// instead of spinning, so that the CPU time a run reports is work, and the cores a spinning
// slot would hold stay free for the other slots. Nothing for a CPU device.
void use_blocking_waits(const c10::Device& device);

// The memory of GPU `index` in bytes; 0 in a build without CUDA or where it cannot be read.
std::uint64_t gpu_total_memory(int index);

// Caps what this process's allocator may hold on GPU `index` at `bytes`, so that runs sharing a
// GPU cannot starve each other: an allocation past the cap fails with CUDA's out-of-memory error
// in this process alone. Nothing in a build without CUDA (no GPU slot exists there).
void cap_gpu_memory(int index, std::uint64_t bytes);

// Whether this build can capture CUDA graphs of work on `device`.
bool step_graphs_supported(const c10::Device& device);

// The memory that a trainer's graphs share. Its graphs replay one at a time on one stream, and
// every tensor that outlives a replay lives outside it, so one pool serves them all.
using GraphPool = std::pair<std::uint64_t, std::uint64_t>;
GraphPool new_graph_pool();

class StepGraph {
 public:
  virtual ~StepGraph() = default;
  // Launches the captured kernels on the calling thread's current stream, without waiting.
  virtual void replay() = 0;
};

// Records what `body` launches on the calling thread's current stream (a stream of its own, not
// the default one) as a graph, without running it; `body` must have run once on this stream
// with the same shapes, so that every library handle and workspace it needs exists. Captures of
// a process take turns, and other threads' work is not disturbed (thread-local capture mode).
// Throws std::runtime_error when the capture fails.
std::unique_ptr<StepGraph> capture_step(const std::function<void()>& body, const GraphPool& pool);

// While alive, the calling thread may launch work on `device`; a capture (capture_step) waits
// until no other thread holds one and holds new ones off until it ends. CUDA's driver crashed in
// cudaStreamEndCapture while other slots' threads worked on the GPU (H200, 8 slots: one run in
// eight), so a capture has the process's GPUs to itself; captures are rare, a few per batch shape
// and slot. Every slot's job holds one. Nothing for a CPU device or in a build without CUDA.
class GpuWorkScope {
 public:
  explicit GpuWorkScope(const c10::Device& device);
  ~GpuWorkScope();
  GpuWorkScope(const GpuWorkScope&) = delete;
  GpuWorkScope& operator=(const GpuWorkScope&) = delete;

 private:
  [[maybe_unused]] bool held_ = false;  // only a CUDA build takes the gate
};

// While alive, every CUDA call that makes the host wait for the device throws (LibTorch's sync
// debug mode set to error; process-wide), so that a loop that should never wait proves it. Does
// nothing in a build without CUDA.
class SyncsForbidden {
 public:
  SyncsForbidden();
  ~SyncsForbidden();
  SyncsForbidden(const SyncsForbidden&) = delete;
  SyncsForbidden& operator=(const SyncsForbidden&) = delete;

 private:
  [[maybe_unused]] int previous_ = 0;  // the mode to restore; only a CUDA build reads it
};

}  // namespace drift
