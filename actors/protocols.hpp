#pragma once
// The messages drift's actors exchange, as types the compiler checks. Every payload is a
// msg::Buffer (one Cap'n Proto message) tagged by an atom; a typed handle accepts only the
// messages its interface lists, and a `request(...).then(...)` on it must handle exactly the
// reply types the interface promises. The run's control actors (server, sink, gatekeeper,
// worker agent) stay dynamically typed: the gatekeeper faces the network and must answer
// anything, and the others take one or two messages from the runner.
#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "messages/buffer.hpp"

namespace drift::actors {

using msg::Buffer;

using task_atom = caf::atom_constant<caf::atom("task")>;        // server -> client
using shadow_atom = caf::atom_constant<caf::atom("shadow")>;    // server -> client: train, keep no state
using train_atom = caf::atom_constant<caf::atom("train")>;      // client -> pool -> slot
using eval_atom = caf::atom_constant<caf::atom("eval")>;        // server -> pool -> slot
using pack_atom = caf::atom_constant<caf::atom("pack")>;        // server -> pool -> slot: devices.pack
using report_atom = caf::atom_constant<caf::atom("report")>;    // server -> sink
using run_atom = caf::atom_constant<caf::atom("run")>;          // runner -> server
using finish_atom = caf::atom_constant<caf::atom("finish")>;    // server -> sink; coordinator -> worker
using stop_atom = caf::atom_constant<caf::atom("stop")>;        // server -> sink: the run stops early
using join_atom = caf::atom_constant<caf::atom("join")>;        // worker -> gatekeeper
using ready_atom = caf::atom_constant<caf::atom("ready")>;      // worker -> gatekeeper
using worker_atom = caf::atom_constant<caf::atom("worker")>;    // gatekeeper -> pool: add a worker
using await_atom = caf::atom_constant<caf::atom("await")>;      // runner -> pool: wait for N workers
using release_atom = caf::atom_constant<caf::atom("release")>;  // runner -> pool: let the workers go
using select_atom = caf::atom_constant<caf::atom("select")>;    // server -> sampler
using ping_atom = caf::atom_constant<caf::atom("ping")>;        // pool -> worker agent: still there?
using tick_atom = caf::atom_constant<caf::atom("tick")>;        // pool -> itself: look at the workers
using checkpoint_atom = caf::atom_constant<caf::atom("ckpt")>;  // server -> sampler: its state
using edges_atom = caf::atom_constant<caf::atom("edges")>;      // runner -> pool -> worker agent: an edge host
// Server -> edge host ([hierarchy] edges in workers; engine/sim/edge_host.hpp says what each does).
using edge_assign_atom = caf::atom_constant<caf::atom("eassign")>;
using edge_pull_atom = caf::atom_constant<caf::atom("epull")>;
using edge_regroup_atom = caf::atom_constant<caf::atom("eregroup")>;
using edge_task_atom = caf::atom_constant<caf::atom("etask")>;
using edge_aggregate_atom = caf::atom_constant<caf::atom("eaggregate")>;
using edge_model_atom = caf::atom_constant<caf::atom("emodel")>;
using edge_drop_atom = caf::atom_constant<caf::atom("edrop")>;
using edge_settle_atom = caf::atom_constant<caf::atom("esettle")>;
using edge_restore_atom = caf::atom_constant<caf::atom("erestore")>;

// Anything that runs jobs: a trainer slot, a worker's stand-in for one, and the device pool.
//   train: client state, task -> update, new client state
//   eval:  evaluation job, weights -> evaluation result
//   pack:  task, pack job (its clients) -> pack result (each client's update or error); only
//          for algorithms whose clients keep no state, so no state travels
using job_runner_actor = caf::typed_actor<caf::replies_to<train_atom, Buffer, Buffer>::with<Buffer, Buffer>,
                                          caf::replies_to<eval_atom, Buffer, Buffer>::with<Buffer>,
                                          caf::replies_to<pack_atom, Buffer, Buffer>::with<Buffer>>;
using slot_actor = job_runner_actor;

// The aggregators of some of a hierarchy's edges (actors/edge_host.hpp), in a worker process:
//   assign: EdgeAssignment -> the edges it keeps (sent once, first)
//   pull: edge, TensorBundle (the cloud's model)       regroup: edge, EdgeRegroup
//   task: edge, serial, model version -> TrainingTask
//   aggregate: edge, EdgeAggregationInput, ClientUpdate each -> EdgeAggregated
//   model: edge -> TensorBundle (handed over)          drop: edge (its model)
//   settle: -> EdgeStates (every kept edge's checkpoint parts)
//   restore: EdgeStates (parts read from a checkpoint; an empty part leaves that state alone)
using edge_host_actor =
    caf::typed_actor<caf::reacts_to<edge_assign_atom, Buffer>, caf::reacts_to<edge_pull_atom, std::uint32_t, Buffer>,
                     caf::reacts_to<edge_regroup_atom, std::uint32_t, Buffer>,
                     caf::replies_to<edge_task_atom, std::uint32_t, std::uint32_t, std::uint64_t>::with<Buffer>,
                     caf::replies_to<edge_aggregate_atom, std::uint32_t, Buffer, std::vector<Buffer>>::with<Buffer>,
                     caf::replies_to<edge_model_atom, std::uint32_t>::with<Buffer>,
                     caf::reacts_to<edge_drop_atom, std::uint32_t>, caf::replies_to<edge_settle_atom>::with<Buffer>,
                     caf::reacts_to<edge_restore_atom, Buffer>>;

// What the gatekeeper may do to the pool: hand it an admitted worker's agent and slots.
using worker_registry_actor =
    caf::typed_actor<caf::reacts_to<worker_atom, std::string, caf::actor, std::vector<slot_actor>>>;

// The device pool: runs jobs, admits workers, and lets the runner wait for and release them.
//   await: n -> the number of live workers, once at least n are
//   release: -> the number of workers told the run is over
//   tick: its own timer, to check that workers answer and jobs meet their deadlines
//   edges: -> an edge host from each live worker, in the order they joined
using pool_actor = job_runner_actor::extend_with<worker_registry_actor>::extend<
    caf::replies_to<await_atom, std::uint32_t>::with<std::uint32_t>, caf::replies_to<release_atom>::with<std::uint32_t>,
    caf::reacts_to<tick_atom>, caf::replies_to<edges_atom>::with<std::vector<edge_host_actor>>>;

// One federated client: a task (Task buffer) -> its update (Update buffer).
using client_actor = caf::typed_actor<caf::replies_to<task_atom, Buffer>::with<Buffer>,
                                      caf::replies_to<shadow_atom, Buffer>::with<Buffer>>;

// The sampler: a SelectionRequest buffer -> a Selection buffer; checkpoint -> its state
// (a StateArchive's bytes).
using sampler_actor = caf::typed_actor<caf::replies_to<select_atom, Buffer>::with<Buffer>,
                                       caf::replies_to<checkpoint_atom>::with<Buffer>>;

}  // namespace drift::actors
