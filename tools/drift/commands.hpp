#pragma once
// The drift CLI's subcommands. Each returns the process exit code; UserError escapes to
// main(), which prints it as one line and exits with 2.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <filesystem>
#include <set>

#include "engine/compose/checkpoint.hpp"
#include "engine/compose/federation_data.hpp"
#include "engine/compose/loader.hpp"
#include "engine/compose/run_directory.hpp"
#include "engine/study/study_results.hpp"
#include "study_runner.hpp"

namespace drift::cli {

struct RunArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::vector<std::string> plugins;  // --plugin: libraries loaded before the scenario (docs/plugins.md)
  std::string out;
  int slots = 0;          // 0: take the scenario's devices
  std::string devices;    // "cpu:2,cuda:0x4": replaces the scenario's devices
  double gpu_memory = 0;  // GiB the run may hold of each of its GPUs; 0: no bound
  bool no_progress = false;
  bool no_plots = false;
  bool quiet = false;  // log to the run directory only (a study prints its own lines)
  // Multi-node: coordinate workers (see drift worker).
  std::string listen;             // HOST:PORT; empty: a single-process run
  int workers = 0;                // wait for this many workers before the first round
  bool no_local = false;          // train on workers only
  bool edges_on_workers = false;  // [hierarchy]: the workers keep the edges' aggregators
  bool slot_processes = false;    // each slot in a worker process of its own, on loopback
  std::string token_file;         // else $DRIFT_JOIN_TOKEN
  bool tls = false;
  std::string cert, key, ca;
  double join_timeout = 600;
  double heartbeat_timeout = 10;  // seconds a worker may leave a ping unanswered
  double deadline_factor = 10;    // a job may run this many times its worker's mean job
  int stop_after = 0;             // tests: stop as if interrupted after this aggregation
};
int run_command(const RunArgs& args);
// drift resume: `args.scenario` is the run directory; --set takes only keys that cannot
// change what was already computed (docs/checkpoints.md#resume).
int resume_command(const RunArgs& args);

// A run ready to start: a new one, or one reopened at its checkpoint.
struct PreparedRun {
  std::shared_ptr<const Scenario> scenario;
  std::shared_ptr<const FederationData> data;
  std::shared_ptr<RunDirectory> directory;
  std::shared_ptr<const StoredCheckpoint> resume_from;  // null: a new run
};
// Logs, runs (stopping cleanly on SIGINT/SIGTERM), draws the figures. The exit code: 0, 1 when
// the run failed, 128 + the signal when it was interrupted.
int execute_run(const RunArgs& args, PreparedRun run);
// Refuses (UserError) devices and cluster flags that cannot work, before anything is written.
void check_run_flags(const RunArgs& args, const Scenario& scenario);
// ... and what they cannot do with this data (a worker keeping an edge whose table is too large).
void check_run_data(const RunArgs& args, const PreparedRun& run);
// --slots and --devices replace the scenario's devices.
void apply_device_flags(const RunArgs& args, Scenario& scenario);

// drift study and drift compare (a study over algorithm variants alone).
struct StudyArgs {
  std::string scenario;
  std::vector<std::string> plugins;     // --plugin, passed on to every child run
  std::vector<std::string> grid;        // KEY=V1,V2,... per factor
  std::vector<std::string> algorithms;  // NAME[:PRESET][+KEY=VALUE]..., comma-separated
  int seeds = 0;                        // seeds 1..N (default 3), unless seed_list is given
  std::vector<std::uint64_t> seed_list;
  std::vector<std::string> sets;
  std::string out;
  RunPool pool;  // every run's devices
  int jobs = 0;  // runs at once; 0: what fills the pool (runs_at_once), 1 without a pool
  bool no_plots = false;
  bool no_progress = false;
  std::string shard;     // "I/N": the I-th of N slices, beside other processes on the same directory
  bool collect = false;  // tables, figures and index.html from the finished runs; run nothing
  std::string emit;      // "slurm" or "shell": write scripts that run `shards` shards; run nothing
  int shards = 0;
  std::string launcher;  // with emit: the command the scripts start drift with ("" : this executable)
};

// A validated study: its factors, every run (cell x seed) and where it goes.
struct StudyPlan {
  std::vector<Factor> factors;
  std::vector<std::uint64_t> seeds;
  SummaryTargets targets;
  std::vector<PlannedRun> runs;  // cells in order, seeds within
  std::filesystem::path out;
  std::set<std::string> warnings;                  // said once, whichever cells share them
  double plot_minutes = 0.0;                       // the scenario's output.plot_minutes
  DirectoryLock lock;                              // on `out`, for as long as the study runs (not when shared)
  std::uint32_t shard_index = 0, shard_count = 1;  // --shard I/N, 0-based
};
// Validates every cell, then creates (or reopens, for the same study) the output directory and
// takes its lock.
StudyPlan plan_study(const StudyArgs& args, const std::string& default_prefix);
// Runs what has not finished; 1 when some run failed.
int execute_study(const StudyArgs& args, const StudyPlan& plan);
StudyTable study_table(const StudyPlan& plan);
int study_command(const StudyArgs& args);
// --emit: OUT/slurm/ (shard.sbatch, collect.sbatch, submit.sh) or OUT/shell/run.sh.
int emit_study_scripts(const StudyArgs& args, const StudyPlan& plan);

// Figures (gnuplot) and index.html of a run directory or of a study's; without gnuplot, one
// line says so and the run or study still succeeds.
int plot_command(const std::string& directory, const std::vector<std::uint32_t>& timeline_rounds);
// A page drawn while its run or study goes on (docs/outputs.md#live-pages): how far it is,
// how often the browser reloads it, and the folder its figures go to. Live drawings alternate
// between two folders, so the page a browser shows never points at figures being redrawn; the
// final drawing (into figures/) removes both.
struct LiveBanner {
  std::string text;
  int refresh_seconds = 0;
  std::string figures_dir;
};
// `timeline_rounds`: the rounds whose task timeline is drawn (empty: the first and the last).
// `stop`, when given and set (a signal's number), stops the drawing between two figures with
// PlotInterrupted; the caller removes what was drawn. `live`: a live page, not the final one.
void plot_run_directory(const std::filesystem::path& run, const std::vector<std::uint32_t>& timeline_rounds = {},
                        const std::atomic<int>* stop = nullptr, const LiveBanner* live = nullptr);
struct PlotInterrupted : std::runtime_error {
  PlotInterrupted() : std::runtime_error("interrupted while drawing the figures") {}
};
void plot_study_directory(const std::filesystem::path& out, const StudyTable& table,
                          const std::atomic<int>* stop = nullptr, const LiveBanner* live = nullptr);
// A run or study that stopped before its final drawing: its live page, if one was drawn,
// stops reloading and says `text` instead of how far it was.
void still_live_page(const std::filesystem::path& directory, const std::string& text);
int compare_command(const StudyArgs& args);

struct ValidateArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::vector<std::string> plugins;  // --plugin: libraries loaded before the scenario (docs/plugins.md)
  bool print = false;
  bool no_data = false;  // check the scenario alone, not its dataset (one the user has not downloaded yet)
};
int validate_command(const ValidateArgs& args);

int list_command();
int list_keys_command();
// docs/catalogue.md: every family's members with their keys, and every scenario key, as markdown.
int list_markdown_command();
// Loads each --plugin library, for the commands whose scenario does not name it (list).
void load_plugins(const std::vector<std::string>& paths);  // drift list keys: the scenario's key table

struct WorkerArgs {
  std::string connect;  // the coordinator's HOST:PORT
  std::string devices = "cpu";
  double gpu_memory = 0;  // GiB this worker may hold of each of its GPUs; 0: no bound
  std::string token_file;
  std::string name;  // default: host name and process id
  std::string expect_scenario;
  std::vector<std::string> plugins;  // loaded first; the coordinator's scenario is matched by digest
  bool tls = false;
  std::string cert, key, ca;
  double connect_timeout = 60;
  double coordinator_timeout = 60;
  std::int64_t crash_after_jobs = 0;
};
int worker_command(const WorkerArgs& args);

// drift check-model: reads a TorchScript model file and, given a sample shape and the number of
// classes, runs it on a probe batch as a run would; a file drift would refuse is a UserError.
struct CheckModelArgs {
  std::string file;
  std::vector<std::int64_t> input;  // one sample's shape, e.g. {1, 28, 28}
  std::int64_t classes = 0;
  bool features = false;  // run features(x), for algorithms that put drift's head on it
  std::string digest;     // refuse a file without it (the isolated check's)
  bool in_process = false;
};
int check_model_command(const CheckModelArgs& args);

// Installs the checker that reads TorchScript files in a copy of drift first
// (engine/core/isolated_check.hpp); every command but the checks that copy runs.
void install_isolated_checker();

// Loads a generator folder (generator.json, mapping.pt, synthesis.pt), probes it and prints
// what it is; a bad export is a UserError.
int check_generator_command(const std::string& directory);

struct PretrainGeneratorArgs {
  std::string out;
  std::string dataset = "fashion-mnist";
  std::string data_path;
  std::int64_t max_samples = 0;  // 0: the whole training set
  std::int64_t latent_dim = 64;
  std::int64_t resolution = 32;
  std::int64_t epochs = 5;
  std::uint64_t seed = 1;
};
// Trains drift's own small generator (a VAE decoder) and exports it in the generator convention.
int pretrain_generator_command(const PretrainGeneratorArgs& args);

// drift epsilon: epsilon of `steps` DP releases (or, with `epsilon`, the noise that reaches it).
struct EpsilonArgs {
  std::optional<double> noise;    // sigma / C, the scenario's privacy.noise_multiplier
  std::optional<double> epsilon;  // calibrate the noise to this instead
  double rate = 0.0;              // Poisson rate, or cohort / population for fixed-size cohorts
  std::int64_t steps = 0;         // signed, so that a negative count is refused rather than wrapped
  double delta = 0.0;
  std::string sampling = "poisson";
  bool opacus = false;  // Opacus's orders, series and conversion
};
int epsilon_command(const EpsilonArgs& args);

// Prints what an availability or profile trace holds (clients, span, online share by hour).
int trace_info_command(const std::string& path);

std::vector<Override> parse_overrides(const std::vector<std::string>& sets);

}  // namespace drift::cli
