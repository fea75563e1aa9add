// The sampler actor: over the Cap'n Proto messages a round driver sends, it answers exactly
// what a CohortSampler answers in the same thread, and refuses a malformed request with an
// error instead of dying.
#include "catch_torch.hpp"

#include <caf/all.hpp>

#include "actors/sampler.hpp"
#include "actors/wire.hpp"
#include "engine/compose/loader.hpp"
#include "engine/training/cpu_arithmetic.hpp"
#include "messages/selection_codec.hpp"

using namespace drift;
using namespace drift::actors;

TEST_CASE("the sampler actor answers as the engine's sampler does, request after request", "[actors][sampler]") {
  auto scenario = std::make_shared<const Scenario>(
      parse_scenario("[federation]\nclients = 30\n[sampler]\nclients_per_round = 6\n", "s.toml"));
  std::vector<std::vector<std::int64_t>> h(30, std::vector<std::int64_t>{10, 20});
  auto population = std::make_shared<const Population>(build_population(*scenario, h));
  CohortSampler local(*scenario, population);

  caf::actor_system_config cfg;
  add_message_types(cfg);
  add_arithmetic_hook(cfg);
  caf::actor_system system{cfg};
  auto actor = system.spawn(sampler, scenario, population, std::string());
  caf::scoped_actor self{system};
  for (std::uint32_t round = 1; round <= 4; ++round) {
    SelectionRequest r;
    r.round = round;
    r.time = 10.0 * round;
    r.busy = {round, round + 10};
    r.losses = {{round, 0.5 * round}};
    Selection remote;
    self->request(actor, caf::infinite, select_atom::value, msg::encode_selection_request(r))
        .receive([&](const Buffer& b) { remote = msg::decode_selection(b); },
                 [&](caf::error& err) { FAIL(error_text(err)); });
    const auto expected = local.answer(r);
    CHECK(remote.round == round);
    CHECK(remote.clients == expected.clients);
    CHECK(remote.cohort_size == 6);
    CHECK(remote.eligible == 28);
  }
  std::string error;
  self->request(actor, caf::infinite, select_atom::value, Buffer(std::vector<char>(5, 'x')))
      .receive([](const Buffer&) {}, [&](caf::error& err) { error = error_text(err); });
  CHECK_THAT(error, Catch::Contains("sampler: malformed selection request"));
  self->send_exit(actor, caf::exit_reason::user_shutdown);
}

// OpenMP keeps a thread count per thread: a CAF thread that main's call never reached ran
// oneDNN's and OpenBLAS's kernels on one OpenMP thread per core, and its bits depended on what
// it had run before (docs/outputs.md#machines).
TEST_CASE("every thread of drift's actor systems computes with one OpenMP thread", "[actors][determinism]") {
  caf::actor_system_config cfg;
  add_message_types(cfg);
  add_arithmetic_hook(cfg);
  cfg.set("scheduler.max-threads", std::size_t{3});
  caf::actor_system system{cfg};
  caf::scoped_actor self{system};
  REQUIRE(openmp_threads_in_this_thread() == 1);  // main's (tests/test_main.cpp)
  // Spawned with an argument: CAF 0.17 dereferences a null argument tuple when a function actor
  // takes none, which UBSan (make check-sanitize) reports.
  auto threads_probe = [](bool as_a_slot) -> caf::behavior {
    if (as_a_slot) use_reproducible_cpu_arithmetic_in_this_thread();  // as a trainer slot does
    return {[](int) { return openmp_threads_in_this_thread(); }};
  };
  for (int i = 0; i < 6; ++i) {
    auto probe = system.spawn(threads_probe, false);
    auto detached = system.spawn<caf::detached>(threads_probe, true);
    for (const auto& actor : {probe, detached})
      self->request(actor, caf::infinite, i)
          .receive([](int threads) { CHECK(threads == 1); }, [](caf::error& err) { FAIL(error_text(err)); });
    self->send_exit(probe, caf::exit_reason::user_shutdown);
    self->send_exit(detached, caf::exit_reason::user_shutdown);
  }
}
