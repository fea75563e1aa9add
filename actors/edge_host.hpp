#pragma once
// An edge host: the aggregators (server halves and models) of some of a hierarchy's edges, as
// an actor a worker process runs for the coordinator's round driver (docs/hierarchy.md#where-edges-run).
// It applies the driver's calls in the order they come with the arithmetic the driver's own
// process would do (make_local_edge_host), so where the edges live changes no bit.
#include <caf/fwd.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/protocols.hpp"
#include "actors/trainer_slot.hpp"
#include "engine/algorithms/algorithm.hpp"

namespace drift::actors {

using EdgeServerMaker = std::function<std::unique_ptr<ServerAlgorithm>(std::uint32_t edge)>;

// Edge e's server half, as every process of a run builds it from the federation's `shape`.
EdgeServerMaker edge_server_maker(const SlotContext& ctx, FederationShape shape);

// The federation's shape where no run directory is at hand (a worker's edge host, and the
// coordinator reading such a host's parts of a checkpoint): server halves keep their tables
// in memory, and one over its budget is refused with the reason.
FederationShape shape_without_directory(const SlotContext& ctx);

// "0, 2, 4": edges in a log line or an error.
std::string edge_list(const std::vector<std::uint32_t>& edges);

// Throws UserError when a worker could not keep some edge (a table over its memory budget,
// which the coordinator's own process would keep on disk in the run directory).
void check_edges_for_workers(const SlotContext& ctx);

// Keeps nothing until it is assigned its edges (which it logs); a call it cannot apply (a server
// half that throws, a malformed message) ends it with the reason, which the coordinator reports.
edge_host_actor::behavior_type edge_host(edge_host_actor::pointer self, SlotContext ctx,
                                         std::function<void(const std::string&)> log);

}  // namespace drift::actors
