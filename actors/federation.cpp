#include "actors/federation.hpp"

#include "actors/bounded_teardown.hpp"
#include "actors/device_pool.hpp"
#include "actors/gatekeeper.hpp"
#include "actors/sampler.hpp"
#include "actors/server.hpp"
#include "actors/wire.hpp"
#include "engine/compose/fingerprint.hpp"
#include "engine/metrics/metrics_file.hpp"

namespace drift::actors {
namespace {

// Publishes the gatekeeper and blocks until `workers` workers are ready. Returns an error
// text, or "" once they are.
std::string gather_workers(caf::actor_system& system, caf::scoped_actor& self, const pool_actor& pool, caf::actor& gate,
                           const Scenario& scenario, const FederationData& data, std::shared_ptr<RunObserver> observer,
                           const ClusterOptions& cluster, const RunInterrupt& interrupt) {
  GatekeeperSetup setup;
  setup.policy = JoinPolicy{cluster.token, scenario_hash(scenario.resolved_toml)};
  setup.scenario_toml = scenario.resolved_toml;
  setup.data_fingerprint = data_fingerprint(data);
  setup.pool = pool;
  setup.observer = observer;
  gate = system.spawn(gatekeeper, setup);
  Endpoint at = *cluster.listen;
  at.port = publish_actor(system, gate, at, cluster.tls);
  observer->on_notice("listening on " + at.text() + (cluster.tls.enabled ? " (TLS)" : "") + ", scenario hash " +
                      setup.policy.scenario_hash + "; waiting for " + std::to_string(cluster.workers) + " worker(s)");
  if (cluster.hooks) cluster.hooks->on_listening(at, setup.policy.scenario_hash);
  if (cluster.workers == 0) return "";
  // Asked again every second, so that an interrupt ends the wait (nothing ran: no checkpoint).
  const auto started = std::chrono::steady_clock::now();
  for (;;) {
    bool ready = false;
    caf::error error;
    self->request(pool, std::chrono::seconds(1), await_atom::value, cluster.workers)
        .receive([&](std::uint32_t) { ready = true; }, [&](caf::error& err) { error = std::move(err); });
    if (ready) return "";
    if (error != caf::sec::request_timeout) return error_text(error);
    if (interrupt.signal.load() != 0) return "interrupted while waiting for the workers; nothing ran";
    if (cluster.hooks)
      if (auto why = cluster.hooks->failure(); !why.empty()) return why;
    const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - started;
    if (cluster.join_timeout_s > 0 && waited.count() >= cluster.join_timeout_s)
      return "not all " + std::to_string(cluster.workers) + " worker(s) were ready within " +
             std::to_string(static_cast<int>(cluster.join_timeout_s)) + " s (--join-timeout)";
  }
}

// The edge hosts of the workers that joined, edges spread over them; "" or why not.
std::string gather_edge_hosts(caf::scoped_actor& self, const pool_actor& pool, const Population& population,
                              RunObserver& observer, std::vector<edge_host_actor>& hosts) {
  std::string failure;
  self->request(pool, std::chrono::seconds(90), edges_atom::value)
      .receive([&](std::vector<edge_host_actor>& got) { hosts = std::move(got); },
               [&](caf::error& err) { failure = "the workers cannot keep the edges: " + error_text(err); });
  if (failure.empty())
    observer.on_notice(std::to_string(population.edges()) + " edge(s) kept by " + std::to_string(hosts.size()) +
                       " worker(s)");
  return failure;
}

// A networked run ends its actor system under a bound: the connection to a worker behind a dead
// link would otherwise hold the process for the kernel's retransmission timeout.
void end_system(std::unique_ptr<caf::actor_system>& system, bool networked, RunObserver& observer) {
  std::optional<BoundedTeardown> bound;
  if (networked) bound.emplace(5.0, [&observer](const std::string& text) { observer.on_notice(text); });
  system.reset();
}

}  // namespace

RunResult run_federation(std::shared_ptr<const Scenario> scenario, std::shared_ptr<const FederationData> data,
                         std::shared_ptr<RunDirectory> directory, std::shared_ptr<RunObserver> observer,
                         const FederationOptions& options) {
  const auto& cluster = options.cluster;
  const auto& control = options.control;
  // Before any actor exists: a directory that cannot be made stops nothing half-started.
  const auto client_states =
      msg::make_state_store(scenario->simulation.client_state, directory->path() / "client_state");
  SinkOptions sink_options{
      SummaryTargets{scenario->evaluation.targets, scenario->evaluation.at_times}, {}, 0.0, control.resume_command, {}};
  if (control.resume_from) {
    client_states->restore_from(control.resume_from->directory / "client_state");
    sink_options.earlier = read_metrics_file(directory->path() / "metrics.jsonl");
    sink_options.wall_before = control.resume_from->checkpoint.wall_seconds;
  }
  auto interrupt = control.interrupt ? control.interrupt : std::make_shared<RunInterrupt>();
  caf::actor_system_config cfg;
  add_message_types(cfg);
  add_arithmetic_hook(cfg);
  // A worker's link silent past the heartbeat (which lets it go first, its jobs to run
  // elsewhere) and 5 s more is closed: what it kept (edges) is then reported lost.
  if (cluster.listen) configure_network(cfg, cluster.tls, cluster.watch.heartbeat_timeout_s + 5);
  // Event-based actors only move buffers; the heavy work runs on the detached slots.
  cfg.set("scheduler.max-threads", std::size_t{2});
  auto system = std::make_unique<caf::actor_system>(cfg);

  SlotContext ctx{scenario, data, data->population, nullptr};
  auto devices = options.devices;
  if (devices.empty()) devices.push_back(DeviceSlots{torch::kCPU, std::max(1u, options.cpu_slots)});
  if (cluster.no_local) devices.clear();
  // Lanes only beside the run's own slots: with none (--no-local, --slot-processes) evaluation
  // shares the workers' slots.
  const auto lanes = eval_lane_devices(devices, scenario->eval_lanes);
  auto watch = cluster.watch;
  watch.losses = std::make_shared<WorkerLosses>();
  sink_options.worker_losses = watch.losses;
  auto pool = system->spawn(device_pool, devices, lanes, ctx, observer, watch);
  auto sink = system->spawn(metrics_sink, directory, observer, sink_options);

  double best = 0.0;
  std::string failure;
  {
    caf::scoped_actor self{*system};
    caf::actor gate;  // admits workers for the whole run (rejoins too)
    std::vector<edge_host_actor> edge_hosts;
    if (cluster.listen) {
      try {
        failure = gather_workers(*system, self, pool, gate, *scenario, *data, observer, cluster, *interrupt);
        if (failure.empty() && cluster.edges_on_workers)
          failure = gather_edge_hosts(self, pool, *data->population, *observer, edge_hosts);
      } catch (const std::exception& e) {
        failure = e.what();  // the actors below must still be stopped, or the system never ends
      }
      if (!failure.empty())
        self->request(sink, std::chrono::seconds(30), stop_atom::value, failure).receive([] {}, [](caf::error&) {});
    }
    caf::actor server_actor;
    sampler_actor sampler_handle;
    if (failure.empty()) {
      ServerOptions server_options;
      server_options.log_eligible = scenario->log_eligible;
      server_options.client_states = client_states;
      server_options.observer = observer;
      server_options.checkpoint = CheckpointOptions{directory, control.resume_from, interrupt, control.stop_after};
      sampler_handle = system->spawn(sampler, scenario, data->population,
                                     control.resume_from ? control.resume_from->checkpoint.sampler : std::string());
      server_actor = system->spawn(server, ctx, ServerPeers{pool, sink, sampler_handle, edge_hosts}, server_options);
      self->request(server_actor, caf::infinite, run_atom::value)
          .receive([&](double b) { best = b; }, [&](caf::error& err) { failure = error_text(err); });
    }
    if (cluster.listen)
      self->request(pool, std::chrono::seconds(30), release_atom::value)
          .receive([](std::uint32_t) {}, [](caf::error&) {});
    for (const auto& a :
         {gate, server_actor, caf::actor_cast<caf::actor>(sampler_handle), caf::actor_cast<caf::actor>(pool), sink})
      if (a) self->send_exit(a, caf::exit_reason::user_shutdown);
  }
  end_system(system, cluster.listen.has_value(), *observer);
  if (!failure.empty()) throw std::runtime_error(failure);
  return RunResult{best, interrupt->stopped.load()};
}

}  // namespace drift::actors
