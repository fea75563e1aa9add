#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "actors/worker.hpp"
#include "commands.hpp"
#include "engine/cluster/join.hpp"
#include "engine/core/error.hpp"
#include "engine/training/device_data.hpp"
#include "gpu_memory.hpp"

namespace drift::cli {
namespace {

std::string default_worker_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "worker");
  return std::string(host) + ":" + std::to_string(getpid());
}

}  // namespace

int worker_command(const WorkerArgs& args) {
  load_plugins(args.plugins);
  actors::WorkerOptions o;
  o.coordinator = parse_endpoint(args.connect, "--connect", false);
  o.token = read_join_token(args.token_file);
  o.name = args.name.empty() ? default_worker_name() : args.name;
  o.devices_text = args.devices;
  o.devices = parse_device_pool(args.devices);
  require_devices(o.devices);
  check_gpu_memory(args.gpu_memory, o.devices, "--devices");
  cap_process_gpu_memory(args.gpu_memory, o.devices);
  use_deterministic_kernels(o.devices);
  o.expected_scenario = args.expect_scenario;
  o.tls = actors::TlsOptions{args.tls, args.cert, args.key, args.ca};
  actors::check_tls_files(o.tls);
  o.connect_timeout_s = args.connect_timeout;
  o.coordinator_timeout_s = args.coordinator_timeout;
  o.crash_after_jobs = args.crash_after_jobs;

  auto log = spdlog::stderr_color_mt("drift-worker");
  log->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [worker " + o.name + "] [%^%l%$] %v");
  o.log = [log](const std::string& line) { log->info("{}", line); };
  try {
    actors::run_worker(o);
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    log->error("{}", e.what());
    return 1;
  }
  return 0;
}

}  // namespace drift::cli
