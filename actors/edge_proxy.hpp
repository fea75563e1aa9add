#pragma once
// The round driver's EdgeHost when the edges live in edge hosts elsewhere (actors/edge_host.hpp):
// each call becomes a message to the host that keeps the edge (edge e at hosts[e % hosts]),
// and answers reach the driver in the order it asked, whichever host answers first, as the
// local host's would (docs/hierarchy.md#where-edges-run).
#include <caf/fwd.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/edge_host.hpp"
#include "actors/protocols.hpp"
#include "engine/sim/edge_host.hpp"

namespace drift::actors {

struct EdgeProxySetup {
  caf::event_based_actor* self = nullptr;  // the server, which sends and receives for the driver
  std::vector<edge_host_actor> hosts;
  SlotContext ctx;                                         // the run's scenario, data and population
  std::function<void(const std::function<void()>&)> step;  // runs an answer as a step of the driver
  std::function<void(const std::string&)> fail;            // the run cannot go on
};

// Assigns each host its edges. The server must call on_down for its down messages: a host
// that goes away (its worker lost) ends the run with the reason.
class EdgeProxy : public EdgeHost {
 public:
  virtual void on_down(const caf::actor_addr& source, const caf::error& reason) = 0;
};

std::unique_ptr<EdgeProxy> make_edge_proxy(EdgeProxySetup setup);

}  // namespace drift::actors
