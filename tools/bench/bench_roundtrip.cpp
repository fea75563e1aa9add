// The message round-trip cost of one client update: a training job's task and client state go
// to a trainer slot and the update and new state come back, with no training in between. Run
// (a) inside one actor system, where a Buffer moves as a pointer, and (b) between two actor
// systems connected by CAF's middleman over TCP on 127.0.0.1, where CAF serialises each
// Buffer's bytes into BASP frames: what a worker process adds per job. Ratios against (a).
#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <chrono>
#include <cstdio>

#include "actors/network.hpp"
#include "actors/wire.hpp"
#include "engine/models/model.hpp"
#include "engine/training/cpu_arithmetic.hpp"
#include "messages/codec.hpp"

using namespace drift;
using namespace drift::actors;
using Clock = std::chrono::steady_clock;

namespace {

// Stands in for a trainer slot: answers every job with a prepared update of the real size.
caf::behavior echo_slot(caf::event_based_actor*, Buffer update) {
  return {[=](train_atom, const Buffer&, const Buffer&) {
    return caf::make_message(update, Buffer(std::vector<char>(64)));
  }};
}

struct Sizes {
  Buffer task, state, update;
};

Sizes real_sizes(const std::string& model_name) {
  TrainingTask task;
  task.round = 1;
  task.weights = state_of(*make_model(model_name, {1, 28, 28}, 10, 1));
  ClientUpdate update;
  update.weights = task.weights;
  update.num_samples = 600;
  return {msg::encode_task(task), msg::encode_client_state({0, {}}), msg::encode_update(update)};
}

// Mean microseconds per job over `n` jobs, after `n / 10` warm-up jobs.
double time_jobs(caf::actor_system& system, const caf::actor& slot, const Sizes& sizes, int n) {
  caf::scoped_actor self{system};
  auto one = [&] {
    self->request(slot, caf::infinite, train_atom::value, sizes.state, sizes.task)
        .receive([](const Buffer&, const Buffer&) {},
                 [](caf::error& err) { throw std::runtime_error(to_string(err)); });
  };
  for (int i = 0; i < n / 10; ++i) one();
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) one();
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / n;
}

}  // namespace

int main() {
  use_reproducible_cpu_arithmetic();
  std::printf("%-12s %-24s %10s %12s %8s\n", "model", "path", "task+upd", "us per job", "ratio");
  for (const std::string model : {"small-cnn", "fedavg-cnn"}) {
    const auto sizes = real_sizes(model);
    const double kb = static_cast<double>(sizes.task.size() + sizes.update.size()) / 1024.0;

    caf::actor_system_config local_cfg;
    add_message_types(local_cfg);
    caf::actor_system local{local_cfg};
    const double in_process = time_jobs(local, local.spawn(echo_slot, sizes.update), sizes, 2000);

    caf::actor_system_config server_cfg, client_cfg;
    for (auto* cfg : {&server_cfg, &client_cfg}) {
      add_message_types(*cfg);
      configure_network(*cfg, TlsOptions{});
    }
    caf::actor_system server{server_cfg}, client{client_cfg};
    auto slot = server.spawn(echo_slot, sizes.update);
    const auto port = publish_actor(server, slot, Endpoint{"127.0.0.1", 0}, TlsOptions{});
    auto remote = connect_to(client, Endpoint{"127.0.0.1", port}, TlsOptions{});
    if (!remote) {
      std::fprintf(stderr, "cannot connect: %s\n", client.render(remote.error()).c_str());
      return 1;
    }
    const double over_tcp = time_jobs(client, *remote, sizes, 500);
    std::printf("%-12s %-24s %8.0f KB %12.1f %8.2f\n", model.c_str(), "one process (pointer)", kb, in_process, 1.0);
    std::printf("%-12s %-24s %8.0f KB %12.1f %8.2f\n", model.c_str(), "two systems, TCP (BASP)", kb, over_tcp,
                over_tcp / in_process);
    caf::anon_send_exit(slot, caf::exit_reason::user_shutdown);
  }
  return 0;
}
