#pragma once
// drift run --slot-processes: every trainer slot of the device pool in a `drift worker` process
// of its own on loopback, started by the run and ended with it (docs/devices.md#slot-processes).
// On a GPU each process has its own CUDA context, autograd thread and graph captures, which
// threads of one process share.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "actors/federation.hpp"
#include "engine/training/devices.hpp"

namespace drift::cli {

// One worker per slot: its --devices ("cpu:1" for each CPU slot, "cuda:I" for each slot of GPU
// I) and its --gpu-memory, the run's `gpu_memory` shared among GPU I's slots (0: none).
struct SlotSpec {
  std::string devices;
  double gpu_memory = 0;
};
std::vector<SlotSpec> slot_specs(const std::vector<DeviceSlots>& devices, double gpu_memory = 0);

// A join token for workers that only this process starts: 32 hex digits from the OS.
std::string private_join_token();

class SlotProcesses : public actors::ListenHooks {
 public:
  // `log_file` takes every worker's output (appended to when `append`).
  SlotProcesses(std::vector<SlotSpec> specs, std::string token, std::vector<std::string> plugins,
                std::filesystem::path log_file, bool append);
  ~SlotProcesses() override;  // gives the workers a few seconds to leave, then kills them
  SlotProcesses(const SlotProcesses&) = delete;
  SlotProcesses& operator=(const SlotProcesses&) = delete;

  void on_listening(const Endpoint& at, const std::string& scenario_hash) override;
  std::string failure() override;

 private:
  struct Child {
    pid_t pid = -1;
    bool reaped = false;
    int status = 0;
  };
  std::vector<SlotSpec> specs_;
  std::string token_;
  std::vector<std::string> plugins_;
  std::filesystem::path log_file_;
  bool append_;
  std::vector<Child> children_;
};

}  // namespace drift::cli
