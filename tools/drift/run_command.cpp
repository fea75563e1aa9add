#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>

#include "actors/federation.hpp"
#include "commands.hpp"
#include "engine/cluster/join.hpp"
#include "engine/core/error.hpp"
#include "progress.hpp"

namespace drift::cli {

std::vector<Override> parse_overrides(const std::vector<std::string>& sets) {
  std::vector<Override> out;
  for (const auto& s : sets) out.push_back(parse_override(s));
  return out;
}

namespace {

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

actors::ClusterOptions cluster_options(const RunArgs& args) {
  actors::ClusterOptions c;
  if (args.listen.empty()) {
    if (args.workers > 0 || args.no_local || args.tls || !args.token_file.empty())
      throw UserError("--workers, --no-local, --tls and --token-file need --listen HOST:PORT");
    return c;
  }
  c.listen = parse_endpoint(args.listen, "--listen", true);
  // CAF 0.17's BASP reads a frame's length from the peer and allocates it before drift sees a
  // message: one 32-byte header could make the coordinator allocate 4 GB. With --tls, a peer
  // without a certificate from the CA fails the TLS handshake before BASP reads anything.
  if (!is_loopback(c.listen->host) && !args.tls)
    throw UserError("--listen " + args.listen + " off loopback needs --tls (with --cert, --key, --ca): without it "
                    "any peer that connects can make the coordinator allocate gigabytes before the join token is "
                    "checked");
  if (args.no_local && args.workers < 1) throw UserError("--no-local needs --workers N (N >= 1): nobody would train");
  c.workers = static_cast<std::uint32_t>(args.workers);
  c.no_local = args.no_local;
  c.token = read_join_token(args.token_file);
  c.tls = actors::TlsOptions{args.tls, args.cert, args.key, args.ca};
  actors::check_tls_files(c.tls);
  c.join_timeout_s = args.join_timeout;
  c.watch.heartbeat_timeout_s = args.heartbeat_timeout;
  c.watch.deadline_factor = args.deadline_factor;
  return c;
}


}  // namespace

int run_command(const RunArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  auto scenario = std::make_shared<Scenario>(load_scenario(args.scenario, parse_overrides(args.sets)));
  if (args.slots > 0 || !args.devices.empty()) {
    scenario->cpu_slots = 0;
    scenario->device_pool = args.slots > 0 ? "cpu:" + std::to_string(args.slots) : args.devices;
  }
  const auto devices = scenario_devices(*scenario);
  const auto cluster = cluster_options(args);
  // Everything that can be wrong with the input is found before the run directory exists.
  auto data = std::make_shared<const FederationData>(prepare_federation_data(*scenario));
  const auto path = choose_run_directory(*scenario, args.out);
  auto directory = std::make_shared<RunDirectory>(path, *scenario, *data);

  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>((path / "log.txt").string(), true);
  auto log = args.quiet ? std::make_shared<spdlog::logger>("drift", file)
                        : std::make_shared<spdlog::logger>("drift", spdlog::sinks_init_list{console, file});
  auto file_only = std::make_shared<spdlog::logger>("drift", file);
  for (auto& l : {log, file_only}) {
    l->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
    l->flush_on(spdlog::level::info);
  }

  const auto& train = *data->data.train;
  log->info("scenario {} ({}), seed {}", scenario->name, scenario->source, scenario->seed);
  log->info("{}: {} training / {} test samples, {} clients ({} partition)", scenario->data.dataset, train.size(),
            data->data.test->size(), scenario->clients, scenario->partition.scheme);
  if (scenario->simulation.mode == SimulationMode::sync)
    log->info("sync rounds: {} clients per round ({} sampler), {} rounds", scenario->sampler.cohort_size(scenario->clients),
              scenario->sampler.name, scenario->rounds);
  else
    log->info("{}: {} clients training at once ({} sampler), {} aggregations", name_of(scenario->simulation.mode),
              scenario->async.concurrency, scenario->sampler.name, scenario->rounds);
  log->info("{} on {}, {} local epoch(s), batch {}, lr {}; devices: {}", scenario->algorithm, scenario->model,
            scenario->training.local_epochs, scenario->training.batch_size, scenario->training.learning_rate,
            cluster.no_local ? std::string("workers only") : describe(devices));
  log->info("run directory: {}", path.string());
  for (const auto& w : scenario->warnings) log->warn("{}", w);
  if (cluster.listen) {
    log->info("coordinator: {} worker(s){}", cluster.workers, cluster.no_local ? ", no local slots" : " plus local slots");
  }

  const bool live = !args.no_progress && !args.quiet && isatty(STDERR_FILENO);
  auto observer = std::make_shared<ProgressDisplay>(log, file_only, live);
  try {
    actors::run_federation(scenario, data, directory, observer, actors::FederationOptions{1, devices, cluster});
  } catch (const std::exception& e) {
    log->error("run failed: {}", e.what());
    return 1;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!args.no_plots) {
    try {
      plot_run_directory(path);
      log->info("figures: {}", (path / "index.html").string());
    } catch (const std::exception& e) {
      log->warn("no figures: {}", e.what());  // the run itself is complete
    }
  }
  log->info("done in {:.1f} s; results in {}", wall, path.string());
  return 0;
}

}  // namespace drift::cli
