#include "actors/federation.hpp"

#include "actors/device_pool.hpp"
#include "actors/server.hpp"
#include "actors/wire.hpp"

namespace drift::actors {

double run_federation(std::shared_ptr<const Scenario> scenario, std::shared_ptr<const FederationData> data,
                      std::shared_ptr<RunDirectory> directory, std::shared_ptr<RunObserver> observer,
                      const FederationOptions& options) {
  caf::actor_system_config cfg;
  add_message_types(cfg);
  // Event-based actors only move buffers; the heavy work runs on the detached slots.
  cfg.set("scheduler.max-threads", std::size_t{2});
  caf::actor_system system{cfg};

  SlotContext ctx{scenario, data, data->population};
  auto devices = options.devices;
  if (devices.empty()) devices.push_back(DeviceSlots{torch::kCPU, std::max(1u, options.cpu_slots)});
  auto pool = system.spawn(device_pool, devices, ctx);
  auto sink = system.spawn(metrics_sink, directory, observer, scenario->evaluation.targets);
  auto server_actor = system.spawn(server, ctx, ServerPeers{pool, sink}, ServerOptions{scenario->log_eligible});

  double best = 0.0;
  std::string failure;
  {
    caf::scoped_actor self{system};
    self->request(server_actor, caf::infinite, run_atom::value)
        .receive([&](double b) { best = b; }, [&](caf::error& err) { failure = error_text(err); });
    for (const auto& a : {server_actor, pool, sink}) self->send_exit(a, caf::exit_reason::user_shutdown);
  }
  if (!failure.empty()) throw std::runtime_error(failure);
  return best;
}

}  // namespace drift::actors
