#pragma once
// Runs a study's runs: each one a child `drift run` process, `jobs` at a time, skipping those
// that already finished (a study run again resumes, it does not repeat), with a progress line.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace drift::cli {

struct PlannedRun {
  std::string label;          // "sampler.name=uniform, seed 2"
  std::string relative_path;  // <cell>/seed-<N>, under the study directory
  std::vector<std::string> sets;
  std::uint32_t rounds = 0;  // aggregations it will run, for the progress line
};

// The devices a study gives every run (drift study / compare --slots, --devices,
// --slot-processes, --gpu-memory): one set of fields, passed on as the same flags.
struct RunPool {
  int slots = 0;                           // CPU slots per run; 0: the scenario's devices
  std::string devices;                     // "cuda:0x2" ("": none)
  bool slot_processes = false;             // each run's slots in worker processes of their own
  double gpu_memory = 0;                   // GiB each run may hold of each of its GPUs; 0: no bound
  std::vector<std::string> flags() const;  // {"--devices", "cuda:0x2", "--slot-processes", ...}
};

struct RunnerOptions {
  std::string scenario;
  std::filesystem::path study_dir;
  int jobs = 1;
  RunPool pool;
  bool no_plots = false;             // children draw no figures
  std::vector<std::string> plugins;  // --plugin for every run child (absolute paths)
  bool live = false;                 // redraw one progress line (a terminal); else a line per run and every 30 s
  // --shard I/N: this process starts with the runs whose index is I - 1 modulo N, then takes
  // any other run that no live process has claimed (docs/studies.md#shards).
  std::uint32_t shard_index = 0, shard_count = 1;
};

struct RunnerOutcome {
  std::size_t ran = 0, skipped = 0, failed = 0, resumed = 0;
  int interrupted_code = 0;  // 128 + the signal when an interrupt stopped the study; else 0
};

// A run whose summary.json says completed, ended or diverged is finished and skipped; an
// unfinished one with a checkpoint is resumed (drift resume); any other is removed and run
// again. Each run is claimed before it starts (an flock on <run>.claim, which the kernel drops
// when its holder dies), so processes sharing a study directory never run one twice, and a
// run whose holder died is taken over; a process leaves when every run is finished, failed
// here, or claimed by another. SIGINT/SIGTERM stop the study: each running run stops at a
// checkpoint, and the same command resumes them. `on_done` hears of each run that ran: its
// exit code and wall seconds.
RunnerOutcome run_planned(const std::vector<PlannedRun>& runs, const RunnerOptions& options,
                          const std::function<void(const PlannedRun&, int, double)>& on_done);

// True when the run directory holds a finished run.
bool run_finished(const std::filesystem::path& run_dir);

}  // namespace drift::cli
