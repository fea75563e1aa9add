// The [hierarchy] section of the scenario's key table, and its named edges (docs/hierarchy.md).
#include "engine/compose/schema_hierarchy.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "engine/compose/value_reader.hpp"
#include "engine/config/time_bounds.hpp"
#include "engine/core/error.hpp"
#include "engine/core/stream_hash.hpp"
#include "engine/population/availability.hpp"
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
  const auto a = s.hierarchy.availability;
  return a == EdgeAvailability::diurnal ? "" : "with hierarchy.availability = " + name_of(a);
}
std::string not_from_file(const S& s) {
  if (const auto why = flat(s); !why.empty()) return why;
  return s.hierarchy.assign == EdgeAssignment::file ? "" : "unless hierarchy.assign = file";
}
std::string sync_cloud(const S& s) {
  if (const auto why = flat(s); !why.empty()) return why;
  return s.hierarchy.cloud == EdgeCloud::fedbuff ? "" : "unless hierarchy.cloud = fedbuff";
}
std::string never_offline(const S& s) {
  if (const auto why = flat(s); !why.empty()) return why;
  for (std::uint32_t e = 0; e < s.hierarchy.edges; ++e)
    if (edge_profile(s.hierarchy, e).availability != EdgeAvailability::always) return "";
  return "when every edge is always online";
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
       input_path(bind_key<S>("file", "assign = file: a CSV with columns client,edge (the edge's number, or a named edge's name), a row per client",
                   &S::hierarchy, &Hc::file)).idle_when(not_from_file),
       bind_key<S>("cloud", "sync: cloud rounds of every sampled edge | fedbuff: each edge pulls the global model when it is free, and the cloud steps every `buffer` edge models (asynchronous edges)",
                   &S::hierarchy, &Hc::cloud).idle_when(flat),
       bind_key<S>("buffer", "cloud = fedbuff: edge models per cloud step", &S::hierarchy, &Hc::buffer)
           .range(1.0, 1e6).idle_when(sync_cloud),
       bind_key<S>("server_lr", "cloud = fedbuff: the cloud's learning rate on the buffer's weighted mean delta", &S::hierarchy,
                   &Hc::server_lr).range(0.0, {}, true).idle_when(sync_cloud),
       bind_key<S>("concurrency", "cloud = fedbuff: edges at work at once, from their pull until their model arrives or their loop ends (FedBuff's C); a pull past it waits for a free slot, first due first; 0 = every edge",
                   &S::hierarchy, &Hc::concurrency).range(0.0, 1e6).idle_when(sync_cloud),
       bind_key<S>("stall_loops", "cloud = fedbuff: the run ends (status ended, saying why) once this many edge loops have ended late, lost or idle since the cloud's last step, as in a world where models never arrive in time; 0 = never",
                   &S::hierarchy, &Hc::stall_loops).range(0.0, 1e9).idle_when(sync_cloud),
       bind_key<S>("file_digest", "assign = file: the file's digest; written when the scenario is resolved, and a file whose bytes differ is refused",
                   &S::hierarchy, &Hc::file_digest).idle_when(not_from_file),
       bind_key<S>("edges_per_round", "edges the cloud samples (seeded) among the online ones each cloud round; 0 = every online edge",
                   &S::hierarchy, &Hc::edges_per_round).range(0.0, 1e6).idle_when(flat),
       bind_key<S>("latency", "edge <-> cloud latency, seconds each way", &S::hierarchy, &Hc::latency)
           .range(0.0, kMaxVirtualSeconds).idle_when(flat),
       bind_key<S>("up_bandwidth", "edge -> cloud bytes per second; 0 = transfers take no time", &S::hierarchy, &Hc::up_bandwidth)
           .range(0.0, kMaxRate).idle_when(flat),
       bind_key<S>("down_bandwidth", "cloud -> edge bytes per second; 0 = transfers take no time", &S::hierarchy, &Hc::down_bandwidth)
           .range(0.0, kMaxRate).idle_when(flat),
       bind_key<S>("aggregation_seconds", "virtual seconds an edge's server takes per update it aggregates, after each edge round; 0 = none",
                   &S::hierarchy, &Hc::aggregation_seconds).range(0.0, kMaxVirtualSeconds).idle_when(flat),
       bind_key<S>("deadline", "virtual seconds after a cloud round's start (cloud = fedbuff: after the edge's pull) by which an edge's model must arrive; later ones are discarded; 0 = none",
                   &S::hierarchy, &Hc::deadline).range(0.0, kMaxVirtualSeconds).idle_when(flat),
       bind_key<S>("keep_work", "an edge that goes offline between its edge rounds or before its model reaches the cloud keeps its model and sends it once back online (the cloud waits, up to its deadline); false: it loses the cloud round's work",
                   &S::hierarchy, &Hc::keep_work).idle_when(never_offline),
       bind_key<S>("availability", "always | diurnal: each edge is online online_fraction of every period, edge e shifted by e/edges of a period | model: as [hierarchy.availability_model], a client availability model with the edges as its clients",
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
      bind_key<E>("aggregation_seconds", "virtual seconds this edge's server takes per update it aggregates", &E::aggregation_seconds)
          .optional().range(0.0, kMaxVirtualSeconds),
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
namespace {

void read_edge_model(Scenario& s, const toml::table& root) {
  const auto* model = root.at_path("hierarchy.availability_model").as_table();
  if (model == nullptr) return;
  auto& a = s.hierarchy.availability_model;
  store_keys(a, availability_keys(), *model, "hierarchy.availability_model");
  for (const auto& spec : availability_model(a.model).params)
    if (const auto* node = model->get(spec.key)) {
      const auto path = "hierarchy.availability_model." + spec.key;
      a.params.set(spec.key, read_value(spec, path, *node, path));
    }
}

void read_named(Scenario& s, const toml::table& edges) {
  auto& h = s.hierarchy;
  for (auto&& [k, node] : edges) {
    EdgeProfile e = h.shared_profile();
    e.name = std::string(k.str());
    // Names go into edges.csv and figures as they are.
    const bool plain = !e.name.empty() && std::all_of(e.name.begin(), e.name.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
    });
    if (!plain)
      throw UserError(s.source + ": hierarchy.edge.\"" + e.name +
                      "\": an edge's name takes letters, digits, '_' and '-' only");
    store_keys(e, edge_profile_keys(), *node.as_table(), "hierarchy.edge." + e.name);
    h.named.push_back(std::move(e));
  }
}

// A model table no edge follows, or edges following the model without its table.
void warn_edge_model(Scenario& s, const toml::table& root) {
  const auto& h = s.hierarchy;
  bool uses_model = false;
  for (std::uint32_t e = 0; e < h.edges; ++e)
    uses_model = uses_model || edge_profile(h, e).availability == EdgeAvailability::model;
  const bool has_table = root.at_path("hierarchy.availability_model").as_table() != nullptr;
  if (has_table && !uses_model && h.enabled())
    s.warnings.push_back("[hierarchy.availability_model] does nothing: no edge has availability = \"model\"");
  if (uses_model && !has_table)
    s.warnings.push_back(
        "hierarchy availability = \"model\" without [hierarchy.availability_model]: its model is "
        "\"always\", every edge online");
}

}  // namespace

void read_hierarchy_tables(Scenario& s, const toml::table& root) {
  read_edge_model(s, root);
  const auto* edges = root.at_path("hierarchy.edge").as_table();
  if (edges != nullptr && !edges->empty()) {
    if (s.hierarchy.enabled())
      read_named(s, *edges);
    else  // hierarchy.edges = 0 (validation counted the tables unless it was set)
      s.warnings.push_back("hierarchy.edges = 0: a flat federation; the " + std::to_string(edges->size()) +
                           " [hierarchy.edge.NAME] tables are not used");
  }
  warn_edge_model(s, root);
}

void record_edge_map_digest(Scenario& s, toml::table& root) {
  auto& h = s.hierarchy;
  if (!h.enabled() || h.assign != EdgeAssignment::file || h.file.empty()) return;
  std::error_code missing;
  if (!std::filesystem::is_regular_file(h.file, missing)) return;  // the population's reader says so
  const auto digest = hash_file(h.file).hex();
  if (!h.file_digest.empty() && h.file_digest != digest)
    throw UserError(s.source + ": hierarchy.file " + h.file + " has digest " + digest +
                    ", but the scenario records hierarchy.file_digest = \"" + h.file_digest +
                    "\": the clients' edge map changed since the run started (or this machine holds another one)");
  h.file_digest = digest;
  root["hierarchy"].as_table()->insert_or_assign("file_digest", digest);
}

}  // namespace drift
