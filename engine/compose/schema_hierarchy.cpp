// The [hierarchy] section of the scenario's key table (docs/hierarchy.md).
#include "engine/compose/schema_hierarchy.hpp"

#include "engine/config/time_bounds.hpp"

namespace drift {
namespace {

using S = Scenario;
using Hc = HierarchyConfig;

// Why a key does nothing in this scenario; "" where it acts.
std::string flat(const S& s) { return s.hierarchy.enabled() ? "" : "with hierarchy.edges = 0 (a flat federation)"; }
std::string not_diurnal(const S& s) {
  if (const auto why = flat(s); !why.empty()) return why;
  return s.hierarchy.availability == EdgeAvailability::diurnal ? "" : "with hierarchy.availability = always";
}

}  // namespace

ScenarioSection hierarchy_section() {
  // clang-format off
  return {
      "hierarchy",
      "edge aggregators between the clients and the server (docs/hierarchy.md); edges = 0: a flat federation",
      {bind_key<S>("edges", "edge aggregators; each client reports to one; 0 = none (flat)", &S::hierarchy, &Hc::edges)
           .range(0.0, 1e6),
       bind_key<S>("edge_rounds", "kappa_2: sync rounds each edge runs with its own clients per cloud round", &S::hierarchy,
                   &Hc::edge_rounds).range(1.0, 1e6).idle_when(flat),
       bind_key<S>("assign", "uniform: a seeded deal of the clients | label: clients sorted by dominant label, in blocks (edges differ in data) | group: edge i holds group i",
                   &S::hierarchy, &Hc::assign).idle_when(flat),
       bind_key<S>("edges_per_round", "edges the cloud samples (seeded) among the online ones each cloud round; 0 = every online edge",
                   &S::hierarchy, &Hc::edges_per_round).range(0.0, 1e6).idle_when(flat),
       bind_key<S>("latency", "edge <-> cloud latency, seconds each way", &S::hierarchy, &Hc::latency)
           .range(0.0, kMaxVirtualSeconds).idle_when(flat),
       bind_key<S>("up_bandwidth", "edge -> cloud bytes per second; 0 = transfers take no time", &S::hierarchy, &Hc::up_bandwidth)
           .range(0.0, kMaxRate).idle_when(flat),
       bind_key<S>("down_bandwidth", "cloud -> edge bytes per second; 0 = transfers take no time", &S::hierarchy, &Hc::down_bandwidth)
           .range(0.0, kMaxRate).idle_when(flat),
       bind_key<S>("deadline", "virtual seconds after a cloud round's start by which an edge's model must arrive; later ones are discarded; 0 = none",
                   &S::hierarchy, &Hc::deadline).range(0.0, kMaxVirtualSeconds).idle_when(flat),
       bind_key<S>("availability", "always | diurnal: each edge is online online_fraction of every period, edge e shifted by e/edges of a period",
                   &S::hierarchy, &Hc::availability).idle_when(flat),
       bind_key<S>("period", "diurnal: seconds of one cycle", &S::hierarchy, &Hc::period)
           .range(0.0, kMaxVirtualSeconds, true).idle_when(not_diurnal),
       bind_key<S>("online_fraction", "diurnal: share of each cycle an edge is online", &S::hierarchy, &Hc::online_fraction)
           .range(0.0, 1.0, true).idle_when(not_diurnal)}};
  // clang-format on
}

}  // namespace drift
