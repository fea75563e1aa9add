#pragma once
// Where the edges' aggregators live ([hierarchy], docs/hierarchy.md#where-edges-run): each edge's
// server half and model. The sync driver and the edge tier keep everything else (who trains
// when in virtual time, the replay of arrivals, every measure) and ask the host for what only an
// aggregator has, each answer coming through a callback that may run later, from the thread
// that calls the driver (as a message from another process would): the task an edge round's
// clients download, the aggregation of the updates the edge round accepted, the models the
// cloud steps with, and, before a checkpoint, a sign that all it was told is done. A host
// applies what it is told and answers what it is asked in the order the driver called it (as
// one actor's mailbox does). The driver applies each answer where today's arithmetic would, so
// when an answer comes cannot change a bit. The local host (make_local_edge_host) answers at once.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/algorithms/algorithm.hpp"
#include "engine/core/state_archive.hpp"
#include "engine/tensors/federated_types.hpp"

namespace drift {

struct Scenario;

class EdgeHost {
 public:
  using TaskReady = std::function<void(std::shared_ptr<TrainingTask>)>;
  using Aggregated = std::function<void(EdgeAggregated)>;
  using ModelsReady = std::function<void(std::vector<NamedTensors>)>;

  virtual ~EdgeHost() = default;
  // The cloud's model reaches `edge`: a cloud round begins, or (buffered cloud) the edge pulls.
  virtual void pull(std::uint32_t edge, const NamedTensors& global) = 0;
  // The timeline moved clients to or from `edge` (ServerAlgorithm::regroup).
  virtual void regroup(std::uint32_t edge, const ClientRegroup& regroup) = 0;
  // The task of edge round `serial` at `edge`: its model and its server half's broadcast.
  virtual void task(std::uint32_t edge, std::uint32_t serial, std::uint64_t version, TaskReady ready) = 0;
  // The model a client starts from instead of the task's (ServerAlgorithm::start_model; null: the task's).
  virtual const NamedTensors* start_model(std::uint32_t edge, std::uint32_t client) const = 0;
  // An edge round's accepted updates (local ids; none when too few arrived) into the edge's model.
  virtual void aggregate(std::uint32_t edge, std::vector<ClientUpdate> updates, AggregationInput input,
                         Aggregated done) = 0;
  // The models of `edges`, in that order, handed over (those edges hold none after): a sync
  // cloud's reporting edges at its step, or a buffered cloud's edge whose loop sends its model.
  virtual void models(const std::vector<std::uint32_t>& edges, ModelsReady ready) = 0;
  // Buffered cloud: an edge's loop ended without sending its model, which it drops.
  virtual void drop_model(std::uint32_t edge) = 0;
  // `ready` once everything asked before is done, so that the calls below read the edges' state
  // as the run left it: a checkpoint waits for it.
  virtual void settle(std::function<void()> ready) = 0;
  // Checkpoints: an edge's server half, and its model (a buffered cloud's running loops).
  virtual void archive_server(std::uint32_t edge, StateArchive& ar) = 0;
  virtual void archive_model(std::uint32_t edge, StateArchive& ar) = 0;
};

// The host in the driver's own process: `edges` server halves built by `make`, models kept in memory.
std::unique_ptr<EdgeHost> make_local_edge_host(
    const Scenario& scenario, std::uint32_t edges,
    const std::function<std::unique_ptr<ServerAlgorithm>(std::uint32_t)>& make);

}  // namespace drift
