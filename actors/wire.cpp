#include "actors/wire.hpp"

#include <caf/thread_hook.hpp>

#include "engine/metrics/summary.hpp"
#include "engine/training/cpu_arithmetic.hpp"

namespace drift::actors {
namespace {

class ArithmeticHook final : public caf::thread_hook {
 public:
  void init(caf::actor_system&) override {}
  void thread_started() override { use_reproducible_cpu_arithmetic_in_this_thread(); }
  void thread_terminates() override {}
};

}  // namespace

void add_arithmetic_hook(caf::actor_system_config& cfg) { cfg.add_thread_hook<ArithmeticHook>(); }

void add_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<msg::Buffer>("drift.buffer");
  // A worker's trainer slots travel to the coordinator as typed handles.
  cfg.add_message_type<slot_actor>("drift.slot");
  cfg.add_message_type<std::vector<slot_actor>>("drift.slots");
  // [hierarchy] edges in workers: their hosts' handles, and an aggregation's updates.
  cfg.add_message_type<edge_host_actor>("drift.edge_host");
  cfg.add_message_type<std::vector<edge_host_actor>>("drift.edge_hosts");
  cfg.add_message_type<std::vector<msg::Buffer>>("drift.buffers");
  // How a run ended, from the server to the metrics sink.
  cfg.add_message_type<RunStatus>("drift.run_status");
}

namespace {
constexpr auto kPoolCategory = caf::atom("drift.pool");
}

caf::error make_pool_error(PoolError code, std::string text) {
  return caf::error(static_cast<std::uint8_t>(code), kPoolCategory, caf::make_message(std::move(text)));
}

bool is_pool_error(const caf::error& err, PoolError code) {
  return err.category() == kPoolCategory && err.code() == static_cast<std::uint8_t>(code);
}

JobLoss job_loss(const caf::error& err) {
  if (is_pool_error(err, PoolError::worker_lost)) return JobLoss::worker_lost;
  if (is_pool_error(err, PoolError::no_slots)) return JobLoss::no_slots;
  return JobLoss::error;
}

std::string exit_text(const caf::error& reason) {
  if (reason == caf::exit_reason::remote_link_unreachable) return "connection lost";
  return caf::to_string(reason);
}

std::string error_text(const caf::error& err) {
  const auto& context = err.context();
  if (context.size() == 1 && context.match_element<std::string>(0)) return context.get_as<std::string>(0);
  return caf::to_string(err);
}

}  // namespace drift::actors
