#pragma once
#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <memory>
#include <string>

#include "actors/metrics_sink.hpp"
#include "actors/protocols.hpp"
#include "engine/cluster/join.hpp"

namespace drift::actors {

struct GatekeeperSetup {
  JoinPolicy policy;             // the token and the scenario hash
  std::string scenario_toml;     // sent to every accepted worker
  std::string data_fingerprint;  // what every worker must rebuild
  worker_registry_actor pool;    // receives the slots of each worker that is ready
  std::shared_ptr<RunObserver> observer;
};

// The only actor a coordinator publishes. Anyone can reach it, so it trusts nothing:
//   join_atom, JoinRequest buffer -> JoinReply buffer (the scenario, or why not)
//   ready_atom, WorkerReady buffer, agent, slots -> JoinReply buffer (accepted, or why not)
// A ready counts only from the node that joined with that session, and only once; the agent
// and slots must live on that node too. Refusals are logged here and sent to the worker.
caf::behavior gatekeeper(caf::event_based_actor* self, GatekeeperSetup setup);

}  // namespace drift::actors
