#include "actors/worker.hpp"

#include <chrono>
#include <thread>

#include "actors/bounded_teardown.hpp"
#include "actors/edge_host.hpp"
#include "actors/trainer_slot.hpp"
#include "actors/wire.hpp"
#include "engine/compose/fingerprint.hpp"
#include "engine/compose/loader.hpp"
#include "engine/core/error.hpp"
#include "engine/core/phase_times.hpp"
#include "messages/cluster_codec.hpp"

namespace drift::actors {
namespace {

using Clock = std::chrono::steady_clock;

caf::actor connect_with_retry(caf::actor_system& system, const WorkerOptions& o) {
  const auto give_up = Clock::now() + std::chrono::duration<double>(o.connect_timeout_s);
  std::string last;
  for (int attempt = 0;; ++attempt) {
    auto remote = connect_to(system, o.coordinator, o.tls);
    if (remote) return *remote;
    last = system.render(remote.error());
    if (Clock::now() >= give_up) break;
    if (attempt == 0) o.log("coordinator " + o.coordinator.text() + " not reachable yet (" + last + "); retrying");
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  throw std::runtime_error("cannot reach the coordinator at " + o.coordinator.text() + " within " +
                           std::to_string(static_cast<int>(o.connect_timeout_s)) + " s: " + last);
}

JoinReply ask(caf::scoped_actor& self, const caf::actor& gatekeeper, const char* what, caf::message request) {
  JoinReply reply;
  std::string failure;
  self->request(gatekeeper, std::chrono::seconds(60), std::move(request))
      .receive([&](const Buffer& buffer) { reply = msg::decode_join_reply(buffer); },
               [&](caf::error& err) { failure = error_text(err); });
  if (!failure.empty()) throw std::runtime_error(std::string(what) + " failed: " + failure);
  if (!reply.accepted) throw UserError("refused by the coordinator: " + reply.reason);
  return reply;
}

// Holds the slots and ends the worker: on `finish` from the coordinator, when the
// coordinator's node goes away, or when its heartbeat has been missing for `silence_s` (a link
// that dropped without a reset never reports the node gone). Keeps edges when the coordinator
// asks ([hierarchy], --edges-on-workers): one edge host, made on the first ask, which ends with
// the agent.
caf::behavior agent(caf::event_based_actor* self, caf::actor coordinator, SlotContext ctx,
                    std::function<void(const std::string&)> log, double silence_s) {
  self->monitor(coordinator);
  self->set_down_handler([self](const caf::down_msg& down) { self->quit(down.reason); });
  auto edges = std::make_shared<edge_host_actor>();
  auto last_heard = std::make_shared<Clock::time_point>(Clock::now());
  self->delayed_send(self, std::chrono::seconds(1), tick_atom::value);
  return {
      [self](finish_atom) { self->quit(caf::exit_reason::normal); },
      // The coordinator's heartbeat: answering is the point, and hearing it.
      [last_heard](ping_atom) { *last_heard = Clock::now(); },
      [=](tick_atom) {
        const double silent = std::chrono::duration<double>(Clock::now() - *last_heard).count();
        if (silence_s > 0 && silent > silence_s)
          return self->quit(caf::make_error(caf::sec::runtime_error,
                                            "no heartbeat from the coordinator for " + std::to_string(int(silent)) +
                                                " s (--coordinator-timeout): its process or the link to it is gone"));
        self->delayed_send(self, std::chrono::seconds(1), tick_atom::value);
      },
      [=](edges_atom) -> caf::result<edge_host_actor> {
        if (!ctx.scenario->hierarchy.enabled())
          return caf::make_error(caf::sec::runtime_error, std::string("the scenario has no edges to keep"));
        if (!*edges) {
          *edges = self->spawn(edge_host, ctx, log);
          self->attach_functor([host = *edges] { caf::anon_send_exit(host, caf::exit_reason::user_shutdown); });
        }
        return *edges;
      },
  };
}

struct JobCounts {
  std::atomic<std::uint64_t> trained{0}, evaluated{0};
};

// What the coordinator holds for each trainer slot: an event-based stand-in that passes jobs
// to the detached slot and answers itself. Answers then carry the stand-in, not the slot, as
// their sender, so the slot is never referenced from the network; a detached actor that is
// (through the BASP broker) could outlive the run and keep the process from exiting.
// Passes a job with one answer to the slot and its answer (or error) back.
template <class Atom>
caf::result<Buffer> forward(slot_actor::pointer self, const slot_actor& slot, Atom atom, const Buffer& a,
                            const Buffer& b) {
  auto promise = self->make_response_promise<Buffer>();
  self->request(slot, caf::infinite, atom, a, b)
      .then([promise](Buffer& result) mutable { promise.deliver(result); },
            [promise](caf::error& err) mutable { promise.deliver(err); });
  return promise;
}

slot_actor::behavior_type slot_front(slot_actor::pointer self, slot_actor slot, std::shared_ptr<JobCounts> counts) {
  return {
      [=](train_atom a, const Buffer& state, const Buffer& task) -> caf::result<Buffer, Buffer> {
        ++counts->trained;
        auto promise = self->make_response_promise<Buffer, Buffer>();
        self->request(slot, caf::infinite, a, state, task)
            .then([promise](Buffer& update, Buffer& new_state) mutable { promise.deliver(update, new_state); },
                  [promise](caf::error& err) mutable { promise.deliver(err); });
        return promise;
      },
      [=](eval_atom a, const Buffer& job, const Buffer& weights) -> caf::result<Buffer> {
        ++counts->evaluated;
        return forward(self, slot, a, job, weights);
      },
      [=](pack_atom a, const Buffer& task, const Buffer& pack) -> caf::result<Buffer> {
        ++counts->trained;  // one job, however many clients it holds
        return forward(self, slot, a, task, pack);
      },
  };
}

void serve(caf::actor_system& system, const WorkerOptions& o) {
  const auto gatekeeper = connect_with_retry(system, o);
  o.log("connected to the coordinator at " + o.coordinator.text());
  caf::scoped_actor self{system};
  const auto joined =
      ask(self, gatekeeper, "joining",
          caf::make_message(join_atom::value, msg::encode_join_request(make_join_request(
                                                  o.token, o.name, o.devices_text, o.expected_scenario))));

  // Everything a job needs is rebuilt here from the scenario and its seed; only models and
  // knowledge will cross the network.
  auto scenario = std::make_shared<const Scenario>(parse_scenario(joined.scenario_toml, "the coordinator's scenario"));
  o.log("scenario " + scenario->name + " (hash " + joined.scenario_hash + "), seed " + std::to_string(scenario->seed) +
        "; rebuilding the data");
  auto data = std::make_shared<const FederationData>(prepare_federation_data(*scenario));
  WorkerReady ready;
  ready.session = joined.session;
  ready.scenario_hash = scenario_hash(scenario->resolved_toml);
  ready.data_fingerprint = data_fingerprint(*data);

  SlotContext ctx{scenario, data, data->population, nullptr};
  if (o.crash_after_jobs > 0) ctx.crash_countdown = std::make_shared<std::atomic<std::int64_t>>(o.crash_after_jobs);
  auto me = system.spawn(agent, gatekeeper, ctx, o.log, o.coordinator_timeout_s);
  auto counts = std::make_shared<JobCounts>();
  std::vector<slot_actor> slots;  // the fronts, as the coordinator sees them
  for (const auto& d : o.devices)
    for (std::uint32_t k = 0; k < d.slots; ++k) {
      auto slot = system.spawn<caf::detached>(trainer_slot, d.device, ctx);
      auto front = system.spawn(slot_front, slot, counts);
      // Slots and fronts end with the agent, or the actor system would wait for them forever.
      me->attach_functor([slot, front] {
        caf::anon_send_exit(front, caf::exit_reason::user_shutdown);
        caf::anon_send_exit(slot, caf::exit_reason::user_shutdown);
      });
      slots.push_back(std::move(front));
    }
  ready.slots = static_cast<std::uint32_t>(slots.size());
  try {
    ask(self, gatekeeper, "reporting ready",
        caf::make_message(ready_atom::value, msg::encode_worker_ready(ready), me, slots));
  } catch (...) {
    caf::anon_send_exit(me, caf::exit_reason::user_shutdown);
    throw;
  }
  o.log("ready: " + std::to_string(slots.size()) + " trainer slot(s) on " + describe(o.devices));

  std::string failure;
  self->monitor(me);
  self->receive([&](const caf::down_msg& down) {
    if (down.reason)
      failure = down.reason == caf::sec::runtime_error ? error_text(down.reason) : exit_text(down.reason);
  });
  if (!failure.empty()) throw std::runtime_error("lost the coordinator (" + failure + ") before the run ended");
  o.log("the coordinator finished the run; this worker ran " + std::to_string(counts->trained.load()) +
        " training and " + std::to_string(counts->evaluated.load()) + " evaluation jobs");
  if (const auto phases = phase_report(); !phases.empty()) o.log(phases);
}

}  // namespace

void run_worker(const WorkerOptions& o) {
  caf::actor_system_config cfg;
  add_message_types(cfg);
  add_arithmetic_hook(cfg);
  // The agent's own clock gives up first, with the reason a user can act on (no heartbeat for
  // --coordinator-timeout); the link's closing 5 s later is the backstop (0: neither closes).
  configure_network(cfg, o.tls, o.coordinator_timeout_s > 0 ? o.coordinator_timeout_s + 5 : 0);
  cfg.set("scheduler.max-threads", std::size_t{2});
  auto system = std::make_unique<caf::actor_system>(cfg);
  std::exception_ptr failure;
  std::string why;
  int code = 0;
  try {
    serve(*system, o);
  } catch (const UserError& e) {
    failure = std::current_exception();
    why = e.what();
    code = 2;
  } catch (const std::exception& e) {
    failure = std::current_exception();
    why = e.what();
    code = 1;
  } catch (...) {
    failure = std::current_exception();
    code = 1;
  }
  // A worker has nothing left to write once the run is over or it gave up. CAF's teardown can
  // wait on a connection the other side has closed, or on a link that drops every packet, so it
  // gets 10 s, after which the process ends with the code (and the reason) it would have given.
  std::thread([code, why, log = o.log] {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    log("shutting down took more than 10 s; exiting anyway" + (why.empty() ? std::string() : ": " + why));
    std::_Exit(code);
  }).detach();
  {
    BoundedTeardown bound(3.0, o.log);  // drops a dead link's connection first (3 s, then 6 s)
    system.reset();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace drift::actors
