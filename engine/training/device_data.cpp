#include "engine/training/device_data.hpp"

#include <ATen/Context.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

namespace drift {

std::shared_ptr<const Dataset> resident_on(const std::shared_ptr<const Dataset>& data, const torch::Device& device) {
  if (device.is_cpu()) return data;
  // Slots of one device share a copy: weak pointers, so the copy goes when the last slot does.
  // The source is kept weakly too: a dataset freed and another made at its address (the next
  // run of a study, say) must not find the old one's copy.
  struct Entry {
    std::weak_ptr<const Dataset> source, copy;
  };
  static std::mutex mutex;
  static std::map<std::pair<const Dataset*, std::string>, Entry> copies;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& slot = copies[{data.get(), device.str()}];
  if (auto copy = slot.copy.lock(); copy && slot.source.lock() == data) return copy;
  auto copy = std::make_shared<Dataset>(*data);
  copy->images = data->images.to(device);
  copy->labels = data->labels.to(device);
  // Other slots read the copy from their own streams: it must be complete before any does.
  const c10::impl::VirtualGuardImpl guard(device.type());
  guard.synchronizeStream(guard.getStream(device));
  slot = {data, copy};
  return copy;
}

void use_own_stream(const torch::Device& device) {
  if (device.is_cpu()) return;
  // Through c10's device-generic interface: it links against a CPU-only LibTorch too, and
  // only a CUDA build (which registers the CUDA implementation) ever gets here.
  const c10::impl::VirtualGuardImpl guard(device.type());
  guard.exchangeStream(guard.getStreamFromGlobalPool(device));
}

void use_deterministic_kernels(const std::vector<DeviceSlots>& devices) {
  const bool any_gpu =
      std::any_of(devices.begin(), devices.end(), [](const DeviceSlots& d) { return d.device.is_cuda(); });
  if (!any_gpu) return;
  // cuBLAS splits a product's reduction differently from stream to stream unless its workspace
  // is fixed; it reads this when it makes its first handle, at the first product, after this.
  // A value the user set is kept.
  ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
  auto& context = at::globalContext();
  // Benchmark mode times several convolution algorithms and keeps the fastest, which may differ
  // from run to run; the deterministic ones add no atomics.
  context.setBenchmarkCuDNN(false);
  context.setDeterministicCuDNN(true);
  // Ops that have a deterministic CUDA kernel use it (index_add_, scatter_add_, ...). An op that
  // has none still runs, and LibTorch warns once, naming it: results may then differ by the
  // last bits between runs.
  context.setDeterministicAlgorithms(true, /*warn_only=*/true);
}

}  // namespace drift
