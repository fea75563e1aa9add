#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>

#include "actors/edge_host.hpp"
#include "actors/federation.hpp"
#include "commands.hpp"
#include "engine/cluster/join.hpp"
#include "engine/compose/client_models.hpp"
#include "engine/compose/packing.hpp"
#include "engine/compose/privacy_summary.hpp"
#include "engine/core/error.hpp"
#include "engine/core/phase_times.hpp"
#include "engine/core/remove_tree.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/sim/round_estimate.hpp"
#include "gpu_memory.hpp"
#include "interrupts.hpp"
#include "live_pages.hpp"
#include "progress.hpp"
#include "slot_processes.hpp"
#include "wall_estimate.hpp"

namespace drift::cli {

std::vector<Override> parse_overrides(const std::vector<std::string>& sets) {
  std::vector<Override> out;
  for (const auto& s : sets) out.push_back(parse_override(s));
  return out;
}

namespace {

std::string lane_names(const std::vector<torch::Device>& lanes) {
  std::string out;
  for (const auto& d : lanes) out += (out.empty() ? "" : ", ") + DeviceSlots{d, 1}.name();
  return out;
}

void describe_run(spdlog::logger& log, const Scenario& scenario, const FederationData& data,
                  const actors::ClusterOptions& cluster, const std::vector<DeviceSlots>& devices,
                  const std::filesystem::path& path) {
  const auto& train = *data.data.train;
  log.info("scenario {} ({}), seed {}", scenario.name, scenario.source, scenario.seed);
  log.info("{}: {} training / {} test samples, {} clients ({} partition)", scenario.data.dataset, train.size(),
           data.data.test->size(), scenario.clients, scenario.partition.scheme);
  if (scenario.simulation.mode == SimulationMode::sync)
    log.info("sync rounds: {} ({} sampler), {} rounds", cohort_description(scenario), scenario.sampler.name,
             scenario.rounds);
  else
    log.info("{}: {} clients training at once ({} sampler), {} aggregations", name_of(scenario.simulation.mode),
             scenario.async.concurrency, scenario.sampler.name, scenario.rounds);
  const auto& training = scenario.training;
  log.info("{} on {}, {}, batch {}, lr {}; devices: {}", scenario.algorithm, scenario.model,
           training.local_steps > 0
               ? std::to_string(training.local_steps) + " local step(s)" +
                     (training.steps_pass == StepsPass::persistent ? " from a pass that runs on across rounds" : "")
               : std::to_string(training.local_epochs) + " local epoch(s)",
           training.batch_size, training.learning_rate,
           cluster.hooks      ? describe(devices) + ", each slot in a worker process of its own"
           : cluster.no_local ? std::string("workers only")
                              : describe(devices));
  if (!cluster.no_local)
    if (const auto lanes = eval_lane_devices(devices, scenario.eval_lanes); !lanes.empty())
      log.info("evaluation runs on a slot of its own on {} (devices.eval_lanes)", lane_names(lanes));
  if (const auto pack = effective_pack(scenario); pack > 1)
    log.info("packs of {} clients train as one model (devices.pack)", pack);
  if (const auto privacy = privacy_description(scenario); !privacy.empty()) log.info("{}", privacy);
  if (const auto secagg = secure_aggregation_description(scenario); !secagg.empty()) log.info("{}", secagg);
  log.info("run directory: {}", path.string());
  for (const auto& w : scenario.warnings) log.warn("{}", w);
  if (scenario.hierarchy.enabled()) {  // edge loops that cannot finish: the run might never end
    ClientModels model(scenario, data, torch::kCPU);
    const auto estimate = estimate_rounds(scenario, *data.population, bytes_of(state_of(model.shared_model())));
    for (const auto& w : edge_loop_warnings(scenario, estimate)) log.warn("{}", w);
  }
  if (cluster.listen && !cluster.hooks)
    log.info("coordinator: {} worker(s){}{}", cluster.workers,
             cluster.no_local ? ", no local slots" : " plus local slots",
             cluster.edges_on_workers ? "; the workers keep the edges" : "");
}

bool is_loopback(const std::string& host) { return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0; }

// --slot-processes: the run listens on loopback for the workers it starts, one per slot.
actors::ClusterOptions slot_process_options(const RunArgs& args, const std::vector<DeviceSlots>& devices) {
  if (!args.listen.empty())
    throw UserError(
        "--slot-processes starts its own workers on loopback and cannot also --listen: for workers on "
        "other machines, start drift worker processes there instead");
  if (args.workers > 0 || args.no_local || args.tls || !args.token_file.empty())
    throw UserError(
        "--slot-processes starts one worker per slot, with a token of its own, on loopback: drop "
        "--workers, --no-local, --tls and --token-file");
  actors::ClusterOptions c;
  c.listen = Endpoint{"127.0.0.1", 0};
  c.workers = static_cast<std::uint32_t>(slot_specs(devices).size());
  c.no_local = true;
  c.edges_on_workers = args.edges_on_workers;
  c.join_timeout_s = args.join_timeout;
  c.watch.heartbeat_timeout_s = args.heartbeat_timeout;
  c.watch.deadline_factor = args.deadline_factor;
  c.watch.workers_hold_ahead = true;  // the run's own children: as local slots, each holds its next job
  return c;
}

actors::ClusterOptions cluster_options(const RunArgs& args, const std::vector<DeviceSlots>& devices) {
  if (args.slot_processes) return slot_process_options(args, devices);
  actors::ClusterOptions c;
  if (args.listen.empty()) {
    if (args.workers > 0 || args.no_local || args.edges_on_workers || args.tls || !args.token_file.empty())
      throw UserError("--workers, --no-local, --edges-on-workers, --tls and --token-file need --listen HOST:PORT");
    return c;
  }
  c.listen = parse_endpoint(args.listen, "--listen", true);
  // CAF 0.17's BASP reads a frame's length from the peer and allocates it before drift sees a
  // message: one 32-byte header could make the coordinator allocate 4 GB. With --tls, a peer
  // without a certificate from the CA fails the TLS handshake before BASP reads anything.
  if (!is_loopback(c.listen->host) && !args.tls)
    throw UserError("--listen " + args.listen +
                    " off loopback needs --tls (with --cert, --key, --ca): without it "
                    "any peer that connects can make the coordinator allocate gigabytes before the join token is "
                    "checked");
  if (args.no_local && args.workers < 1) throw UserError("--no-local needs --workers N (N >= 1): nobody would train");
  c.workers = static_cast<std::uint32_t>(args.workers);
  c.no_local = args.no_local;
  if (args.edges_on_workers && args.workers < 1)
    throw UserError("--edges-on-workers needs --workers N (N >= 1): nobody would keep the edges");
  c.edges_on_workers = args.edges_on_workers;
  c.token = read_join_token(args.token_file);
  c.tls = actors::TlsOptions{args.tls, args.cert, args.key, args.ca};
  actors::check_tls_files(c.tls);
  c.join_timeout_s = args.join_timeout;
  c.watch.heartbeat_timeout_s = args.heartbeat_timeout;
  c.watch.deadline_factor = args.deadline_factor;
  return c;
}

// Complete lines of a file that is being appended to: the aggregations a run has written.
std::size_t complete_lines(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return static_cast<std::size_t>(
      std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

// The run's page while it trains (docs/outputs.md#live-pages): how many aggregations of how many.
std::unique_ptr<LivePages> live_run_page(const std::filesystem::path& path, const Scenario& scenario,
                                         std::shared_ptr<spdlog::logger> log) {
  const std::size_t total = scenario.rounds;
  auto draw = [path, total, minutes = scenario.plot_minutes](const std::atomic<int>& stop, std::size_t drawing) {
    const auto done = std::min(complete_lines(path / "metrics.jsonl"), total);
    const auto banner = live_banner("aggregation " + std::to_string(done) + " of " + std::to_string(total), done, total,
                                    "run", minutes, drawing);
    plot_run_directory(path, {}, &stop, &banner);
  };
  log->info("live page: {} (redrawn every {:g} min while the run trains)", (path / "index.html").string(),
            scenario.plot_minutes);
  return std::make_unique<LivePages>(scenario.plot_minutes, draw,
                                     [log](const std::string& text) { log->warn("{}", text); });
}

}  // namespace

void check_run_flags(const RunArgs& args, const Scenario& scenario) {
  cluster_options(args, scenario_devices(scenario));
  check_gpu_memory(args.gpu_memory, scenario_devices(scenario), "the run's device pool");
  if (args.edges_on_workers && !scenario.hierarchy.enabled())
    throw UserError("--edges-on-workers needs a [hierarchy] section: a flat federation has no edges to keep");
}

void check_run_data(const RunArgs& args, const PreparedRun& run) {
  if (args.edges_on_workers)
    actors::check_edges_for_workers(actors::SlotContext{run.scenario, run.data, run.data->population, nullptr});
}

// Devices given on the command line replace the scenario's (they do not change results).
void apply_device_flags(const RunArgs& args, Scenario& scenario) {
  if (args.slots > 0 || !args.devices.empty()) {
    scenario.cpu_slots = 0;
    scenario.device_pool = args.slots > 0 ? "cpu:" + std::to_string(args.slots) : args.devices;
  }
}

int run_command(const RunArgs& args) {
  PreparedRun run;
  auto scenario = std::make_shared<Scenario>(load_scenario(args.scenario, parse_overrides(args.sets), args.plugins));
  apply_device_flags(args, *scenario);
  run.scenario = scenario;
  // Everything that can be wrong with the input is found before the run directory exists.
  check_run_flags(args, *scenario);
  run.data = std::make_shared<const FederationData>(prepare_federation_data(*scenario));
  check_run_data(args, run);
  const auto path = choose_run_directory(*scenario, args.out);
  run.directory = std::make_shared<RunDirectory>(path, *scenario, *run.data);
  return execute_run(args, std::move(run));
}

int execute_run(const RunArgs& args, PreparedRun run) {
  const auto started = std::chrono::steady_clock::now();
  const auto& scenario = run.scenario;
  const auto& data = run.data;
  const auto devices = scenario_devices(*scenario);
  auto cluster = cluster_options(args, devices);
  const auto path = run.directory->path();
  const bool resuming = run.resume_from != nullptr;
  if (args.slot_processes) {
    cluster.token = private_join_token();
    cluster.hooks = std::make_shared<SlotProcesses>(slot_specs(devices, args.gpu_memory), cluster.token, args.plugins,
                                                    path / "workers.log", resuming);
  } else {
    cap_process_gpu_memory(args.gpu_memory, devices);
  }

  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  // A resumed run's log goes on after the first process's.
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>((path / "log.txt").string(), !resuming);
  auto log = args.quiet ? std::make_shared<spdlog::logger>("drift", file)
                        : std::make_shared<spdlog::logger>("drift", spdlog::sinks_init_list{console, file});
  auto file_only = std::make_shared<spdlog::logger>("drift", file);
  for (auto& l : {log, file_only}) {
    l->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
    l->flush_on(spdlog::level::info);
  }
  if (resuming)
    log->info("resuming {} from its checkpoint after aggregation {} (virtual time {:.1f} s)", path.string(),
              run.resume_from->checkpoint.round, run.resume_from->checkpoint.virtual_time);
  describe_run(*log, *scenario, *data, cluster, devices, path);
  if (args.gpu_memory > 0)
    log->info("the run holds at most {} GiB of each GPU{}", gib_text(args.gpu_memory),
              args.slot_processes ? ", shared among its slot processes" : "");

  const bool live = !args.no_progress && !args.quiet && isatty(STDERR_FILENO);
  auto observer = std::make_shared<ProgressDisplay>(log, file_only, live);
  actors::FederationOptions options{1, devices, cluster, {}};
  options.control.resume_from = run.resume_from;
  options.control.interrupt = std::make_shared<actors::RunInterrupt>();
  options.control.stop_after = static_cast<std::uint32_t>(args.stop_after);
  options.control.resume_command = "drift resume " + path.string();
  actors::RunResult result;
  // Watched until the figures are drawn too: a signal then ends the drawing, not the process.
  InterruptWatch watch(options.control.interrupt, [observer](const std::string& text) { observer->on_warning(text); });
  auto live_page = args.no_plots || scenario->plot_minutes <= 0 ? nullptr : live_run_page(path, *scenario, log);
  // A live page left behind stops reloading and says why the final one never came.
  auto end_live = [&live_page, &path](const std::string& why) {
    if (!live_page) return;
    live_page->stop();
    if (live_page->drawings() > 0) still_live_page(path, why);
  };
  try {
    result = actors::run_federation(scenario, data, run.directory, observer, options);
  } catch (const std::exception& e) {
    end_live(std::string("The run failed: ") + e.what());
    log->error("run failed: {}", e.what());
    // Interrupted before anything could be saved (waiting for workers): still an interrupt.
    const int signal = options.control.interrupt->signal.load();
    return signal != 0 ? 128 + signal : 1;
  }
  if (result.interrupted) {
    end_live("Interrupted; drift resume " + path.string() + " continues the run and draws the final page.");
    log->warn("interrupted; continue with: drift resume {}", path.string());
    return watch.exit_code();
  }
  // A signal the run could not stop at a checkpoint for (it ended with its last aggregation, or
  // no aggregation could come): summary.json says how it ended; the figures are not drawn.
  if (options.control.interrupt->signal.load() != 0) {
    end_live("Interrupted; summary.json says how the run ended, and drift plot " + path.string() + " draws its page.");
    log->warn("interrupted; {}/summary.json says how the run ended (drift plot {} draws its figures)", path.string(),
              path.string());
    return watch.exit_code();
  }
  if (live_page) live_page->stop();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (const auto phases = phase_report(); !phases.empty()) log->info("{}", phases);
  if (!args.no_plots) {
    try {
      plot_run_directory(path, {}, &options.control.interrupt->signal);
      log->info("figures: {}", (path / "index.html").string());
    } catch (const PlotInterrupted&) {
      std::error_code ec;
      remove_tree(path / "figures", ec);
      std::filesystem::remove(path / "index.html", ec);
      log->warn("interrupted while drawing the figures (the run directory is complete); draw them with: drift plot {}",
                path.string());
      return watch.exit_code();
    } catch (const std::exception& e) {
      log->warn("no figures: {}", e.what());  // the run itself is complete
    }
  }
  log->info("done in {:.1f} s; results in {}", wall, path.string());
  return 0;
}

}  // namespace drift::cli
