#include "engine/population/population.hpp"
#include "engine/config/time_bounds.hpp"

#include <algorithm>
#include <cmath>

#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/population/csv_table.hpp"
#include "engine/population/topology.hpp"

namespace drift {
namespace {

bool matches(const GroupConfig& g, std::size_t group_index, std::uint32_t client, const std::vector<std::int64_t>* hist,
             std::uint64_t seed) {
  auto contains = [&](std::int64_t label) {
    return std::find(g.labels.begin(), g.labels.end(), label) != g.labels.end();
  };
  if (g.rule == GroupRule::id_range) return client >= g.from && client <= g.to;
  if (g.rule == GroupRule::proportion) return make_stream(seed, "group", {group_index, client}).uniform() < g.share;
  if (hist == nullptr || hist->empty()) return false;
  if (g.rule == GroupRule::dominant_label) {
    const auto top = std::max_element(hist->begin(), hist->end()) - hist->begin();  // ties: lowest label
    return contains(top);
  }
  if (g.rule == GroupRule::label_set) {
    for (std::size_t c = 0; c < hist->size(); ++c)
      if ((*hist)[c] > 0 && !contains(static_cast<std::int64_t>(c))) return false;
    return true;
  }
  return false;
}

void check_groups(const Scenario& s, std::int64_t num_classes, std::uint32_t clients) {
  for (const auto& g : s.groups) {
    for (auto label : g.labels)
      if (label < 0 || label >= num_classes)
        throw UserError("groups." + g.name + ".labels: label " + std::to_string(label) + " but the dataset has " +
                        std::to_string(num_classes) + " classes");
    if (g.rule == GroupRule::id_range && g.to >= static_cast<std::int64_t>(clients))
      throw UserError("groups." + g.name + ".to is " + std::to_string(g.to) + " but client ids end at " +
                      std::to_string(clients - 1));
  }
}

ClientSystem draw_system(const ProfileConfig& p, std::uint32_t client, std::uint64_t seed) {
  ClientSystem s{p.speed, p.up_bandwidth, p.down_bandwidth, p.latency};
  if (p.speed_sigma > 0.0) s.speed *= std::exp(p.speed_sigma * make_stream(seed, "profile", {client}).normal());
  return s;
}

// Rows of a profile trace replace the drawn profile of the clients they name.
void apply_profile_trace(const std::string& path, TraceMapping mapping, std::uint64_t seed, Population& pop) {
  const auto t = read_csv(path, {"client", "speed", "up_bandwidth", "down_bandwidth", "latency"}, "profile trace");
  const auto c = column_index(t, "client"), sp = column_index(t, "speed"), up = column_index(t, "up_bandwidth"),
             down = column_index(t, "down_bandwidth"), lat = column_index(t, "latency");
  const auto client_of = trace_rows_to_clients(t, pop.size(), mapping, seed);
  std::vector<std::size_t> first_line(pop.size(), 0);  // where each client's row is, 0: none yet
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    const auto where = path + ":" + std::to_string(t.lines[i]);
    const auto rate_ok = [](double v) { return v >= kMinRate && v <= kMaxRate; };
    if (!(rate_ok(r[sp]) && rate_ok(r[up]) && rate_ok(r[down]) && r[lat] >= 0 && r[lat] <= kMaxVirtualSeconds))
      throw UserError(where +
                      ": speed and bandwidths must lie in [1e-6, 1e15] per second, latency in [0, 1e12] s, "
                      "so that every virtual time derived from them stays finite");
    if (client_of[i] < 0) continue;  // a trace client the seeded draw left out
    auto& seen = first_line[static_cast<std::size_t>(client_of[i])];
    if (seen != 0)
      throw UserError(where + ": trace client " + std::to_string(static_cast<long>(r[c])) +
                      " already has a row (line " + std::to_string(seen) + ")");
    seen = t.lines[i];
    pop.system[static_cast<std::size_t>(client_of[i])] = {r[sp], r[up], r[down], r[lat]};
  }
}

void assign_groups_and_profiles(const Scenario& s, Population& pop) {
  pop.group.assign(pop.size(), kNoGroup);
  pop.group_members.assign(s.groups.size(), {});
  for (const auto& g : s.groups) pop.group_names.push_back(g.name);
  pop.system.resize(pop.size());
  for (std::uint32_t c = 0; c < pop.size(); ++c) {
    const auto* hist = pop.histograms.empty() ? nullptr : &pop.histograms[c];
    for (std::size_t g = 0; g < s.groups.size(); ++g) {
      if (matches(s.groups[g], g, c, hist, s.seed)) {
        pop.group[c] = static_cast<std::uint32_t>(g);
        pop.group_members[g].push_back(c);
        break;
      }
    }
    const auto& profile = pop.group[c] == kNoGroup ? s.profile : s.groups[pop.group[c]].profile;
    pop.system[c] = draw_system(profile, c, s.seed);
  }
  if (!s.profile.trace.empty()) apply_profile_trace(s.profile.trace, s.profile.trace_clients, s.seed, pop);
  for (const auto& g : s.groups)
    if (!g.profile.trace.empty() && g.profile.trace != s.profile.trace)
      apply_profile_trace(g.profile.trace, g.profile.trace_clients, s.seed, pop);
}

// federation.held_out: round(share x N) clients, at least one, drawn from the "held-out" stream;
// or every member of federation.held_out_group. Someone must remain to take part.
void assign_held_out(const Scenario& s, Population& pop) {
  std::vector<std::uint32_t> chosen;
  if (!s.held_out_group.empty()) {
    const auto g = pop.group_index(s.held_out_group);
    if (g == kNoGroup)
      throw UserError("federation.held_out_group = '" + s.held_out_group + "' names no group of the scenario");
    chosen = pop.group_members[g];
  } else if (s.held_out > 0.0) {
    const auto k = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(s.held_out * pop.size())));
    std::vector<std::uint32_t> ids(pop.size());
    for (std::uint32_t c = 0; c < pop.size(); ++c) ids[c] = c;
    Rng draw = make_stream(s.seed, "held-out");
    draw.shuffle(ids);
    chosen.assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(k, ids.size())));
  }
  if (chosen.empty()) return;
  if (chosen.size() >= pop.size())
    throw UserError("federation.held_out leaves no client to take part (" + std::to_string(chosen.size()) + " of " +
                    std::to_string(pop.size()) + " held out)");
  pop.held_out.assign(pop.size(), 0);
  for (auto c : chosen) pop.held_out[c] = 1;
}

void assign_edges_of(const Scenario& s, Population& pop) {
  pop.edge = assign_edges(s, pop);
  pop.edge_members = edge_members(pop.edge, s.hierarchy.edges);
}

}  // namespace

std::uint32_t Population::group_index(const std::string& name) const {
  for (std::uint32_t g = 0; g < group_names.size(); ++g)
    if (group_names[g] == name) return g;
  return kNoGroup;
}

Population build_population(const Scenario& s, const std::vector<std::vector<std::int64_t>>& histograms) {
  Population pop;
  pop.histograms = histograms;
  pop.num_classes = histograms.empty() ? 0 : static_cast<std::int64_t>(histograms.front().size());
  check_groups(s, pop.num_classes, static_cast<std::uint32_t>(histograms.size()));
  pop.label_distribution.assign(static_cast<std::size_t>(pop.num_classes), 0.0);
  double total = 0.0;
  for (const auto& h : histograms) {
    std::uint64_t n = 0;
    for (std::size_t c = 0; c < h.size(); ++c) {
      n += static_cast<std::uint64_t>(h[c]);
      pop.label_distribution[c] += static_cast<double>(h[c]);
    }
    pop.num_samples.push_back(n);
    total += static_cast<double>(n);
  }
  for (auto& p : pop.label_distribution) p = total > 0 ? p / total : 0.0;
  assign_groups_and_profiles(s, pop);
  assign_held_out(s, pop);
  assign_edges_of(s, pop);
  return pop;
}

Population synthetic_population(const Scenario& s, std::uint32_t clients, std::uint64_t samples) {
  Population pop;
  pop.num_samples.assign(clients, samples);
  assign_groups_and_profiles(s, pop);
  assign_held_out(s, pop);
  assign_edges_of(s, pop);
  return pop;
}

}  // namespace drift
