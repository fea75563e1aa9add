#pragma once
#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <memory>

#include "actors/checkpointer.hpp"
#include "actors/metrics_sink.hpp"
#include "actors/protocols.hpp"
#include "actors/trainer_slot.hpp"
#include "messages/state_store.hpp"

namespace drift::actors {

struct ServerPeers {
  job_runner_actor pool;
  caf::actor sink;
  sampler_actor sampler;  // answers the driver's selection requests (actors/sampler)
  // [hierarchy]: where the edges' aggregators live (actors/edge_host); none: in this process.
  std::vector<edge_host_actor> edge_hosts;
};

struct ServerOptions {
  bool log_eligible = true;
  std::shared_ptr<msg::StateStore> client_states;  // null: in memory
  std::shared_ptr<RunObserver> observer;           // shown progress within a round; may be null
  CheckpointOptions checkpoint;                    // where and when to checkpoint, what to resume
};

// Hosts the scenario's round driver (engine/sim): turns its training jobs into requests to
// client actors and its selection requests into requests to the sampler, feeds the answers back, evaluates aggregations
// on the device pool and sends the reports to the sink in aggregation order. Checkpoints when the Checkpointer says so,
// once every report before it is written. Replies to `run` when the last report is written (and the summary,
// "interrupted" when an interrupt stopped the run at a checkpoint).
caf::behavior server(caf::event_based_actor* self, SlotContext ctx, ServerPeers peers, ServerOptions options);

}  // namespace drift::actors
