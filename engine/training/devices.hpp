#pragma once
// The devices a process trains on and how many jobs each runs at once. Written as
// "cpu:2,cuda:0x4,cuda:1": two CPU slots (one intra-op thread each), four concurrent jobs on
// the first GPU, one on the second. A slot count per GPU is the cap that bounds its memory.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/choices.hpp"

namespace drift {

struct DeviceSlots {
  torch::Device device{torch::kCPU};
  std::uint32_t slots = 1;
  std::string name() const;  // "cpu", "cuda:0"
};

// The cores this process may run on: its CPU affinity (taskset, a container's or Slurm's
// cpuset), not every core of the machine. At least 1.
unsigned usable_cores();

// Parses a device list; "cpu" alone means one slot per usable core. Throws UserError for bad syntax,
// a count of 0 or a device listed twice. Availability is checked by require_devices.
std::vector<DeviceSlots> parse_device_pool(const std::string& text);

// Whether the linked LibTorch was built with CUDA and sees a GPU.
bool cuda_available();

// Throws UserError naming the device when a GPU is asked for that this build cannot use:
// a CPU-only LibTorch (Debian's), or an index beyond the GPUs present.
void require_devices(const std::vector<DeviceSlots>& devices);

// Placement: among devices that have an idle slot, the one running the fewest jobs relative to
// its slots (ties: the first listed). nullopt when no slot is idle.
std::optional<std::size_t> least_loaded_device(const std::vector<DeviceSlots>& devices,
                                               const std::vector<std::uint32_t>& running);

std::string describe(const std::vector<DeviceSlots>& devices);  // "cpu x2, cuda:0 x4"

// The devices of `pool` that get an evaluation lane under `lanes`, in pool order.
std::vector<torch::Device> eval_lane_devices(const std::vector<DeviceSlots>& pool, EvalLanes lanes);

// How many runs on the pool `devices` a study starts at once: the host's `cores` shared by the
// pool's slots (a GPU slot keeps a host thread busy too), and, where a run may hold
// `run_gpu_bytes` of each of its GPUs (0: no bound), no more than the smallest of them holds
// (`gpu_bytes(index)`: a GPU's memory; 0 when unknown, then it bounds nothing). At least 1.
int runs_at_once(const std::vector<DeviceSlots>& devices, int cores, std::uint64_t run_gpu_bytes,
                 const std::function<std::uint64_t(int)>& gpu_bytes);

}  // namespace drift
