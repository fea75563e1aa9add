#include "engine/training/devices.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "engine/core/error.hpp"

namespace drift {
namespace {

// The whole of `text` as an integer in [min, max], or -1.
long parse_integer(const std::string& text, long min, long max) {
  std::size_t used = 0;
  long value = -1;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    return -1;
  }
  return used == text.size() && value >= min && value <= max ? value : -1;
}

std::uint32_t parse_count(const std::string& text, const std::string& entry) {
  const long value = parse_integer(text, 1, 4096);
  if (value < 0) throw UserError("device '" + entry + "': '" + text + "' is not a slot count between 1 and 4096");
  return static_cast<std::uint32_t>(value);
}

}  // namespace

std::string DeviceSlots::name() const { return device.str(); }

unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<DeviceSlots> parse_device_pool(const std::string& text) {
  std::vector<DeviceSlots> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto entry = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (entry.empty()) throw UserError("empty entry in device list '" + text + "' (expected e.g. cpu:2,cuda:0x4)");
    DeviceSlots d;
    if (entry == "cpu") {
      d.slots = usable_cores();
    } else if (entry.rfind("cpu:", 0) == 0) {
      d.slots = parse_count(entry.substr(4), entry);
    } else if (entry.rfind("cuda:", 0) == 0) {
      const auto rest = entry.substr(5);
      const auto x = rest.find('x');
      const long gpu = parse_integer(rest.substr(0, x), 0, 255);
      if (gpu < 0) throw UserError("device '" + entry + "': expected cuda:INDEX or cuda:INDEXxSLOTS, e.g. cuda:0x4");
      d.device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(gpu));
      d.slots = x == std::string::npos ? 1 : parse_count(rest.substr(x + 1), entry);
    } else {
      throw UserError("unknown device '" + entry + "': use cpu, cpu:N, cuda:I or cuda:IxN");
    }
    for (const auto& seen : out)
      if (seen.device == d.device) throw UserError("device " + d.name() + " is listed twice in '" + text + "'");
    out.push_back(d);
  }
  return out;
}

bool cuda_available() { return torch::cuda::is_available(); }

void require_devices(const std::vector<DeviceSlots>& devices) {
  for (const auto& d : devices) {
    if (!d.device.is_cuda()) continue;
    if (!cuda_available())
      throw UserError(
          "device " + d.name() +
          " asked for, but this drift is linked against a LibTorch without CUDA (Debian's libtorch "
          "is CPU-only); build with a CUDA LibTorch (make CMAKE_ARGS=-DCMAKE_PREFIX_PATH=...) or use cpu:N");
    const auto count = static_cast<std::int64_t>(torch::cuda::device_count());
    if (d.device.index() >= count)
      throw UserError("device " + d.name() + " asked for, but only " + std::to_string(count) + " GPU(s) are visible");
  }
}

std::optional<std::size_t> least_loaded_device(const std::vector<DeviceSlots>& devices,
                                               const std::vector<std::uint32_t>& running) {
  std::optional<std::size_t> best;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (running[d] >= devices[d].slots) continue;
    // running/slots compared without division: a * s_b < b * s_a.
    if (!best || static_cast<std::uint64_t>(running[d]) * devices[*best].slots <
                     static_cast<std::uint64_t>(running[*best]) * devices[d].slots)
      best = d;
  }
  return best;
}

std::string describe(const std::vector<DeviceSlots>& devices) {
  std::string out;
  for (const auto& d : devices) out += (out.empty() ? "" : ", ") + d.name() + " x" + std::to_string(d.slots);
  return out;
}

int runs_at_once(const std::vector<DeviceSlots>& devices, int cores, std::uint64_t run_gpu_bytes,
                 const std::function<std::uint64_t(int)>& gpu_bytes) {
  std::uint64_t slots = 0;
  for (const auto& d : devices) slots += d.slots;
  std::uint64_t runs =
      std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::max(1, cores)) / std::max<std::uint64_t>(1, slots));
  for (const auto& d : devices) {
    if (!d.device.is_cuda() || run_gpu_bytes == 0) continue;
    if (const auto memory = gpu_bytes(d.device.index()); memory > 0)
      runs = std::min(runs, std::max<std::uint64_t>(1, memory / run_gpu_bytes));
  }
  return static_cast<int>(std::min<std::uint64_t>(runs, 4096));
}

std::vector<torch::Device> eval_lane_devices(const std::vector<DeviceSlots>& pool, EvalLanes lanes) {
  std::vector<torch::Device> out;
  for (const auto& d : pool)
    if (lanes == EvalLanes::all || (lanes == EvalLanes::gpus && d.device.is_cuda())) out.push_back(d.device);
  return out;
}

}  // namespace drift
