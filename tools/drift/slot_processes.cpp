#include "slot_processes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "drift_child.hpp"
#include "engine/core/error.hpp"
#include "gpu_memory.hpp"

namespace drift::cli {

std::vector<SlotSpec> slot_specs(const std::vector<DeviceSlots>& devices, double gpu_memory) {
  std::vector<SlotSpec> specs;
  for (const auto& d : devices)
    for (std::uint32_t s = 0; s < d.slots; ++s)
      specs.push_back(d.device.is_cpu() ? SlotSpec{"cpu:1", 0.0} : SlotSpec{d.name(), gpu_memory / d.slots});
  return specs;
}

std::string private_join_token() {
  std::random_device os;  // /dev/urandom: the token guards the listener, it decides no result
  std::string token;
  char digits[9];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(digits, sizeof digits, "%08x", static_cast<unsigned>(os()));
    token += digits;
  }
  return token;
}

SlotProcesses::SlotProcesses(std::vector<SlotSpec> specs, std::string token, std::vector<std::string> plugins,
                             std::filesystem::path log_file, bool append)
    : specs_(std::move(specs)),
      token_(std::move(token)),
      plugins_(std::move(plugins)),
      log_file_(std::move(log_file)),
      append_(append) {}

void SlotProcesses::on_listening(const Endpoint& at, const std::string& scenario_hash) {
  DriftChildSetup setup;
  // Its own group, so that Ctrl-C reaches the run alone: the run stops at a checkpoint while the
  // workers finish their jobs, then lets them go.
  setup.own_process_group = true;
  setup.close_other_fds = true;
  setup.environment = {"DRIFT_JOIN_TOKEN=" + token_};
  setup.output_fd = open(log_file_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_APPEND | (append_ ? 0 : O_TRUNC), 0644);
  if (setup.output_fd < 0) throw UserError("cannot write " + log_file_.string());
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const auto name = "slot-" + std::to_string(i + 1);
    std::vector<std::string> args{"drift", "worker", "--connect", at.text(), "--devices", specs_[i].devices};
    args.insert(args.end(), {"--name", name, "--expect-scenario", scenario_hash});
    for (const auto& p : plugins_) args.insert(args.end(), {"--plugin", p});
    if (specs_[i].gpu_memory > 0) args.insert(args.end(), {"--gpu-memory", gib_text(specs_[i].gpu_memory)});
    Child child;  // children_[i] runs specs_[i]
    child.pid = start_drift_child(std::move(args), setup);
    if (child.pid < 0) {
      close(setup.output_fd);
      throw std::runtime_error("cannot start a worker process for slot " + std::to_string(i + 1) + ": fork failed");
    }
    children_.push_back(child);
  }
  close(setup.output_fd);
}

std::string SlotProcesses::failure() {
  for (std::size_t i = 0; i < children_.size(); ++i) {
    auto& c = children_[i];
    if (c.reaped || waitpid(c.pid, &c.status, WNOHANG) != c.pid) continue;
    c.reaped = true;
    const auto how = WIFEXITED(c.status) ? "exited with code " + std::to_string(WEXITSTATUS(c.status))
                                         : "was killed by signal " + std::to_string(WTERMSIG(c.status));
    return "the worker process of slot " + std::to_string(i + 1) + " (" + specs_[i].devices + ") " + how +
           " before the run began; its output is in " + log_file_.string();
  }
  return "";
}

SlotProcesses::~SlotProcesses() {
  // The run has let its workers go by now; they leave within moments.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (auto& c : children_) {
    while (!c.reaped) {
      const pid_t done = waitpid(c.pid, &c.status, WNOHANG);
      if (done == c.pid || (done < 0 && errno != EINTR)) c.reaped = true;
      if (c.reaped || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (c.reaped) continue;
    kill(c.pid, SIGKILL);
    while (waitpid(c.pid, &c.status, 0) < 0 && errno == EINTR) {
    }
    c.reaped = true;
  }
}

}  // namespace drift::cli
