#include "engine/core/phase_times.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>

namespace drift {
namespace {

std::atomic<int>& enabled_flag() {
  // -1: not read yet.
  static std::atomic<int> flag{-1};
  return flag;
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, PhaseTotal> totals;
};

Registry& registry() {
  static Registry r;
  return r;
}

double wall_now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double thread_cpu_now() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

bool phase_times_enabled() {
  auto& flag = enabled_flag();
  int value = flag.load(std::memory_order_relaxed);
  if (value < 0) {
    const char* env = std::getenv("DRIFT_PHASE_TIMES");
    value = env != nullptr && std::strcmp(env, "1") == 0 ? 1 : 0;
    flag.store(value, std::memory_order_relaxed);
  }
  return value == 1;
}

void set_phase_times(bool enabled) { enabled_flag().store(enabled ? 1 : 0, std::memory_order_relaxed); }

std::vector<PhaseTotal> phase_totals() {
  auto& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<PhaseTotal> out;
  for (const auto& [name, total] : r.totals) out.push_back(total);
  return out;
}

std::string phase_report() {
  const auto totals = phase_totals();
  if (totals.empty()) return "";
  std::string out = "phase times (DRIFT_PHASE_TIMES; CPU is the timed thread's own):\n";
  char line[200];
  std::snprintf(line, sizeof line, "  %-28s %10s %12s %12s %10s\n", "phase", "count", "wall s", "cpu s", "ms each");
  out += line;
  for (const auto& t : totals) {
    const double each = t.count > 0 ? 1e3 * t.wall_seconds / static_cast<double>(t.count) : 0.0;
    std::snprintf(line, sizeof line, "  %-28s %10llu %12.4f %12.4f %10.4f\n", t.name.c_str(),
                  static_cast<unsigned long long>(t.count), t.wall_seconds, t.cpu_seconds, each);
    out += line;
  }
  return out;
}

void reset_phase_times() {
  auto& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.totals.clear();
}

PhaseScope::PhaseScope(const char* name) {
  if (!phase_times_enabled()) return;
  name_ = name;
  wall_start_ = wall_now();
  cpu_start_ = thread_cpu_now();
}

PhaseScope::~PhaseScope() {
  if (name_ == nullptr) return;
  const double wall = wall_now() - wall_start_;
  const double cpu = thread_cpu_now() - cpu_start_;
  auto& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  auto& t = r.totals[name_];
  t.name = name_;
  ++t.count;
  t.wall_seconds += wall;
  t.cpu_seconds += cpu;
}

}  // namespace drift
