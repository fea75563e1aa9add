#pragma once
// How drift's messages ride on CAF: every payload is a msg::Buffer (one Cap'n Proto
// message), tagged by an atom. In one process a Buffer is passed by shared pointer; across
// processes CAF serialises its bytes as one raw block.
#include <caf/all.hpp>
#include <caf/meta/load_callback.hpp>
#include <caf/meta/type_name.hpp>

#include <string>
#include <vector>

#include "actors/protocols.hpp"
#include "engine/sim/job_loss.hpp"
#include "messages/buffer.hpp"

namespace drift::msg {

template <class Inspector>
typename std::enable_if<Inspector::reads_state, typename Inspector::result_type>::type inspect(Inspector& f,
                                                                                               Buffer& x) {
  return f(caf::meta::type_name("drift.buffer"), x.bytes());
}

template <class Inspector>
typename std::enable_if<Inspector::writes_state, typename Inspector::result_type>::type inspect(Inspector& f,
                                                                                                Buffer& x) {
  std::vector<char> bytes;
  auto adopt = caf::meta::load_callback([&]() -> caf::error {
    x = Buffer(std::move(bytes));
    return caf::none;
  });
  return f(caf::meta::type_name("drift.buffer"), bytes, adopt);
}

}  // namespace drift::msg

namespace drift::actors {

// Why the device pool could not run a job, as opposed to the job itself failing.
enum class PoolError : std::uint8_t {
  worker_lost = 1,  // the worker running it died or disconnected: the client drops out
  no_slots = 2,     // no trainer slot remains anywhere: the run cannot go on
};
caf::error make_pool_error(PoolError code, std::string text);
bool is_pool_error(const caf::error& err, PoolError code);
// What the engine's rules call a job the pool gave back with `err`.
JobLoss job_loss(const caf::error& err);

// Registers drift's message types; every process of a federation must call it.
void add_message_types(caf::actor_system_config& cfg);
// Every thread the actor system starts computes as drift's main thread does
// (use_reproducible_cpu_arithmetic_in_this_thread): server-side training and edge aggregations
// run on CAF's scheduler threads.
void add_arithmetic_hook(caf::actor_system_config& cfg);

// Why an actor went down, for people: "connection lost" when its node became unreachable.
std::string exit_text(const caf::error& reason);

// The text of an error raised by a drift actor (its context string) or CAF's rendering.
std::string error_text(const caf::error& err);

}  // namespace drift::actors
