// The coordinator's doors, seen from another actor system over TCP on 127.0.0.1: the
// gatekeeper refuses malformed, unauthenticated and forged messages (and hands nothing to
// the pool for them), and the device pool refuses orders from another process.
#include "catch_torch.hpp"

#include <caf/io/all.hpp>

#include "actors/device_pool.hpp"
#include "actors/gatekeeper.hpp"
#include "actors/network.hpp"
#include "actors/wire.hpp"
#include "messages/cluster_codec.hpp"

using namespace drift;
using namespace drift::actors;

namespace {

const std::string kToken = "0123456789abcdef0123";

struct Recorder : RunObserver {
  void on_warning(const std::string& text) override {
    std::lock_guard<std::mutex> lock(mutex);
    warnings.push_back(text);
  }
  std::mutex mutex;
  std::vector<std::string> warnings;
};

// Stands in for the pool: counts the workers handed to it.
worker_registry_actor::behavior_type counting_pool(worker_registry_actor::pointer,
                                                   std::shared_ptr<std::atomic<int>> workers) {
  return {[=](worker_atom, const std::string&, const caf::actor&, const std::vector<slot_actor>&) { ++*workers; }};
}

// Takes an argument it ignores: CAF 0.17.6 spawns a function actor without arguments through a
// null shared_ptr<std::tuple<>> that it dereferences (undefined behaviour UBSan reports).
caf::behavior idle_actor(caf::event_based_actor*, int) {
  return {[](finish_atom) {}};
}

struct Systems {
  caf::actor_system_config coordinator_cfg, worker_cfg;
  std::unique_ptr<caf::actor_system> coordinator, worker;
  Systems() {
    for (auto* cfg : {&coordinator_cfg, &worker_cfg}) {
      add_message_types(*cfg);
      add_arithmetic_hook(*cfg);
      configure_network(*cfg, TlsOptions{});
    }
    coordinator = std::make_unique<caf::actor_system>(coordinator_cfg);
    worker = std::make_unique<caf::actor_system>(worker_cfg);
  }
  // The actor as the worker's system sees it, through the middleman.
  caf::actor remote(const caf::actor& local) {
    const auto port = publish_actor(*coordinator, local, Endpoint{"127.0.0.1", 0}, TlsOptions{});
    auto handle = connect_to(*worker, Endpoint{"127.0.0.1", port}, TlsOptions{});
    REQUIRE(handle);
    return *handle;
  }
};

JoinReply ask(caf::scoped_actor& self, const caf::actor& gate, caf::message request) {
  JoinReply reply;
  self->request(gate, std::chrono::seconds(30), std::move(request))
      .receive([&](const msg::Buffer& b) { reply = msg::decode_join_reply(b); },
               [&](caf::error& err) { FAIL("no reply: " << error_text(err)); });
  return reply;
}

}  // namespace

TEST_CASE("the gatekeeper refuses malformed, unauthenticated and forged messages", "[cluster][actors]") {
  Systems systems;
  auto workers = std::make_shared<std::atomic<int>>(0);
  auto observer = std::make_shared<Recorder>();
  GatekeeperSetup setup{JoinPolicy{kToken, "hash"}, "seed = 1\n", "fingerprint",
                        systems.coordinator->spawn(counting_pool, workers), observer};
  auto gate_local = systems.coordinator->spawn(gatekeeper, setup);
  const auto gate = systems.remote(gate_local);
  caf::scoped_actor self{*systems.worker};
  auto agent = systems.worker->spawn(idle_actor, 0);
  auto slot = systems.worker->spawn(idle_actor, 0);

  // Bytes that are no join request.
  auto reply = ask(self, gate, caf::make_message(join_atom::value, msg::Buffer(std::vector<char>(48, '\x7f'))));
  CHECK_FALSE(reply.accepted);
  CHECK_THAT(reply.reason, Catch::Contains("malformed join request"));
  // An oversized join request (more than the 1 MiB a handshake may take).
  const auto huge = make_join_request(std::string(std::size_t{2} << 20, 'x'), "w", "cpu", "");
  reply = ask(self, gate, caf::make_message(join_atom::value, msg::encode_join_request(huge)));
  CHECK_THAT(reply.reason, Catch::Contains("exceeds the limit"));
  // The wrong token.
  auto request = make_join_request("0123456789abcdef0124", "intruder", "cpu:1", "");
  reply = ask(self, gate, caf::make_message(join_atom::value, msg::encode_join_request(request)));
  CHECK(reply.reason == "wrong join token");
  CHECK(reply.scenario_toml.empty());  // nothing about the run leaks
  // A ready without a join.
  reply = ask(self, gate,
              caf::make_message(ready_atom::value, msg::encode_worker_ready({77, "hash", "fingerprint", 1}), agent,
                                std::vector<slot_actor>{caf::actor_cast<slot_actor>(slot)}));
  CHECK(reply.reason == "no join was accepted for this session");

  // Joined properly: the scenario comes back; a "slot" that lives on the coordinator's node
  // (its own gatekeeper) is refused, and the session cannot be used twice.
  request = make_join_request(kToken, "w1", "cpu:1", "");
  reply = ask(self, gate, caf::make_message(join_atom::value, msg::encode_join_request(request)));
  REQUIRE(reply.accepted);
  CHECK(reply.scenario_toml == "seed = 1\n");
  const auto session = reply.session;
  reply = ask(self, gate,
              caf::make_message(ready_atom::value, msg::encode_worker_ready({session, "hash", "fingerprint", 1}), agent,
                                std::vector<slot_actor>{caf::actor_cast<slot_actor>(gate)}));
  CHECK(reply.reason == "a trainer slot does not live on its node");
  reply = ask(self, gate,
              caf::make_message(ready_atom::value, msg::encode_worker_ready({session, "hash", "fingerprint", 1}), agent,
                                std::vector<slot_actor>{caf::actor_cast<slot_actor>(slot)}));
  CHECK(reply.reason == "no join was accepted for this session");

  // Other data on the worker's side is refused; the right data is accepted and reaches the pool.
  reply = ask(self, gate, caf::make_message(join_atom::value, msg::encode_join_request(request)));
  reply = ask(self, gate,
              caf::make_message(ready_atom::value, msg::encode_worker_ready({reply.session, "hash", "other", 1}), agent,
                                std::vector<slot_actor>{caf::actor_cast<slot_actor>(slot)}));
  CHECK_THAT(reply.reason, Catch::StartsWith("data fingerprint mismatch"));
  CHECK(*workers == 0);
  reply = ask(self, gate, caf::make_message(join_atom::value, msg::encode_join_request(request)));
  reply = ask(self, gate,
              caf::make_message(ready_atom::value, msg::encode_worker_ready({reply.session, "hash", "fingerprint", 1}),
                                agent, std::vector<slot_actor>{caf::actor_cast<slot_actor>(slot)}));
  CHECK(reply.accepted);
  for (int i = 0; i < 100 && *workers == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(*workers == 1);
  {
    std::lock_guard<std::mutex> lock(observer->mutex);
    CHECK(observer->warnings.size() == 7);  // every refusal is logged on the coordinator's side
  }
  for (const auto& a : {agent, slot}) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(gate_local, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(setup.pool, caf::exit_reason::user_shutdown);
}

TEST_CASE("the device pool takes no orders from another process", "[cluster][actors]") {
  Systems systems;
  auto pool_local = systems.coordinator->spawn(device_pool, std::vector<DeviceSlots>{}, std::vector<torch::Device>{},
                                               SlotContext{}, std::make_shared<RunObserver>(), WorkerWatch{});
  const auto pool = systems.remote(caf::actor_cast<caf::actor>(pool_local));
  caf::scoped_actor self{*systems.worker};
  std::string error;
  self->request(pool, std::chrono::seconds(30), train_atom::value, msg::Buffer(std::vector<char>(8)),
                msg::Buffer(std::vector<char>(8)))
      .receive([](const msg::Buffer&, const msg::Buffer&) { FAIL("a foreign job was accepted"); },
               [&](caf::error& err) { error = error_text(err); });
  CHECK(error == "the device pool takes orders only from its own process");
  self->request(pool, std::chrono::seconds(30), release_atom::value)
      .receive([](std::uint32_t) { FAIL("a foreign release was accepted"); },
               [&](caf::error& err) { error = error_text(err); });
  CHECK(error == "the device pool takes orders only from its own process");
  caf::anon_send_exit(pool_local, caf::exit_reason::user_shutdown);
}
