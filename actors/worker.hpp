#pragma once
// The worker side of a multi-node run (`drift worker`): connect to a coordinator, join with
// the token, rebuild the data from the scenario it sends, offer this machine's trainer slots,
// and train until the coordinator says the run is over.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/network.hpp"
#include "engine/cluster/endpoint.hpp"
#include "engine/training/devices.hpp"

namespace drift::actors {

struct WorkerOptions {
  Endpoint coordinator;
  std::string token;
  std::string name;          // shown in both sides' logs
  std::string devices_text;  // as given, for the coordinator's log
  std::vector<DeviceSlots> devices;
  std::string expected_scenario;  // refuse to train any other scenario; empty: any
  TlsOptions tls;
  double connect_timeout_s = 60;  // keep retrying while the coordinator is not up yet
  // Give up once the coordinator's heartbeat (a ping a second) has been missing this long: its
  // process or the link to it is gone without a word (no reset), or it let this worker go.
  double coordinator_timeout_s = 60;
  std::int64_t crash_after_jobs = 0;  // fault injection for tests; 0: never
  std::function<void(const std::string&)> log;
};

// Returns when the coordinator releases the worker at the end of the run. Throws UserError
// when refused (wrong token, version, scenario or data) and std::runtime_error when the
// coordinator cannot be reached or goes away mid-run.
void run_worker(const WorkerOptions& options);

}  // namespace drift::actors
