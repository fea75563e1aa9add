// The [hierarchy] section of the scenario's key table, and its named edges (docs/hierarchy.md).
#include "engine/compose/schema_hierarchy.hpp"

#include <algorithm>
#include <cctype>

#include "engine/compose/value_reader.hpp"
#include "engine/config/time_bounds.hpp"
#include "engine/core/error.hpp"
#include "engine/population/topology.hpp"

namespace drift {
namespace {

using S = Scenario;
using Hc = HierarchyConfig;

// Why a key does nothing in this scenario; "" where it acts.
std::string flat(const S& s) { return s.hierarchy.enabled() ? "" : "with hierarchy.edges = 0 (a flat federation)"; }
// The global cycle's keys act for the numbered edges, and for named edges that are diurnal
// without their own value: warning about them needs the named edges, which are read after the
// sections; the key table checks the numbered case.
std::string not_diurnal(const S& s) {
  if (const auto why = flat(s); !why.empty()) return why;
  if (!s.hierarchy.named.empty()) return "";
  return s.hierarchy.availability == EdgeAvailability::diurnal ? "" : "with hierarchy.availability = always";
}
std::string not_from_file(const S& s) {
  if (const auto why = flat(s); !why.empty()) return why;
  return s.hierarchy.assign == EdgeAssignment::file ? "" : "unless hierarchy.assign = file";
}
std::string never_offline(const S& s) {
  if (const auto why = flat(s); !why.empty()) return why;
  return expected_online_edges(s.hierarchy) < s.hierarchy.edges ? "" : "when every edge is always online";
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
       bind_key<S>("assign", "uniform: a seeded deal of the clients | label: clients sorted by dominant label, in blocks (edges differ in data) | group: edge i holds group i | file: as hierarchy.file says",
                   &S::hierarchy, &Hc::assign).idle_when(flat),
       bind_key<S>("file", "assign = file: a CSV with columns client,edge (the edge's number, or a named edge's name), a row per client",
                   &S::hierarchy, &Hc::file).idle_when(not_from_file),
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
       bind_key<S>("keep_work", "an edge that goes offline between its edge rounds or before its model reaches the cloud keeps its model and sends it once back online (the cloud waits, up to its deadline); false: it loses the cloud round's work",
                   &S::hierarchy, &Hc::keep_work).idle_when(never_offline),
       bind_key<S>("availability", "always | diurnal: each edge is online online_fraction of every period, edge e shifted by e/edges of a period",
                   &S::hierarchy, &Hc::availability).idle_when(flat),
       bind_key<S>("period", "diurnal: seconds of one cycle", &S::hierarchy, &Hc::period)
           .range(0.0, kMaxVirtualSeconds, true).idle_when(not_diurnal),
       bind_key<S>("online_fraction", "diurnal: share of each cycle an edge is online", &S::hierarchy, &Hc::online_fraction)
           .range(0.0, 1.0, true).idle_when(not_diurnal)}};
  // clang-format on
}

const std::vector<KeyBinding<EdgeProfile>>& edge_profile_keys() {
  using E = EdgeProfile;
  // clang-format off
  static const std::vector<KeyBinding<E>> keys = {
      bind_key<E>("latency", "edge <-> cloud latency, seconds each way", &E::latency).optional().range(0.0, kMaxVirtualSeconds),
      bind_key<E>("up_bandwidth", "edge -> cloud bytes per second; 0 = transfers take no time", &E::up_bandwidth)
          .optional().range(0.0, kMaxRate),
      bind_key<E>("down_bandwidth", "cloud -> edge bytes per second; 0 = transfers take no time", &E::down_bandwidth)
          .optional().range(0.0, kMaxRate),
      bind_key<E>("availability", "always | diurnal", &E::availability).optional(),
      bind_key<E>("period", "diurnal: seconds of one cycle", &E::period).optional().range(0.0, kMaxVirtualSeconds, true),
      bind_key<E>("online_fraction", "diurnal: share of each cycle the edge is online", &E::online_fraction)
          .optional().range(0.0, 1.0, true),
      bind_key<E>("phase", "diurnal: where in the cycle the edge starts, a share of the period (default e / edges)",
                  &E::phase).optional().range(0.0, 1.0),
      bind_key<E>("group", "assign = group: the group this edge holds (default: the group of the edge's name)", &E::group)
          .optional(),
  };
  // clang-format on
  return keys;
}

const std::vector<ParamSpec>& edge_profile_schema() {
  static const std::vector<ParamSpec> specs = specs_of(edge_profile_keys());
  return specs;
}

// [hierarchy.edge.NAME]: named edges in name order, each starting from the [hierarchy] values;
// hierarchy.edges, where set, must count them.
void read_named_edges(Scenario& s, const toml::table& root) {
  const auto* edges = root.at_path("hierarchy.edge").as_table();
  if (edges == nullptr || edges->empty()) return;
  auto& h = s.hierarchy;
  if (!h.enabled()) {  // hierarchy.edges = 0 (validation counted the tables unless it was set)
    s.warnings.push_back("hierarchy.edges = 0: a flat federation; the " + std::to_string(edges->size()) +
                         " [hierarchy.edge.NAME] tables are not used");
    return;
  }
  for (auto&& [k, node] : *edges) {
    EdgeProfile e;
    e.name = std::string(k.str());
    // Names go into edges.csv and figures as they are.
    const bool plain = !e.name.empty() && std::all_of(e.name.begin(), e.name.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
    });
    if (!plain)
      throw UserError(s.source + ": hierarchy.edge.\"" + e.name +
                      "\": an edge's name takes letters, digits, '_' and '-' only");
    e.latency = h.latency;
    e.up_bandwidth = h.up_bandwidth;
    e.down_bandwidth = h.down_bandwidth;
    e.availability = h.availability;
    e.period = h.period;
    e.online_fraction = h.online_fraction;
    store_keys(e, edge_profile_keys(), *node.as_table(), "hierarchy.edge." + e.name);
    h.named.push_back(std::move(e));
  }
}

}  // namespace drift
