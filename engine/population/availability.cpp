#include "engine/population/availability.hpp"
#include "engine/config/time_bounds.hpp"

#include <algorithm>
#include <cmath>

#include "engine/config/catalog.hpp"
#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/population/csv_table.hpp"
#include "engine/population/participation_process.hpp"

namespace drift {

// The built-in models' rows, declared here outside the anonymous namespace below, so that a row
// defined in a file of its own links (docs/development.md#adding-an-availability-model); the
// participation processes' come from participation_rows.cpp.
AvailabilityModelInfo always_availability_info();
AvailabilityModelInfo markov_availability_info();
AvailabilityModelInfo diurnal_availability_info();
AvailabilityModelInfo trace_availability_info();

namespace {

class AlwaysOnline final : public AvailabilityModel {
 public:
  bool online(std::uint32_t, double) override { return true; }
  double next_offline(std::uint32_t, double) override { return kNever; }
  double next_online(std::uint32_t, double t) override { return t; }
};

// Online during [k*period - phase, k*period - phase + duty*period) for every integer k.
class Diurnal final : public AvailabilityModel {
 public:
  Diurnal(double period, double duty, double phase) : period_(period), on_(duty * period), phase_(phase) {}
  bool online(std::uint32_t, double t) override { return position(t) < on_; }
  double next_offline(std::uint32_t, double t) override {
    if (on_ >= period_) return kNever;
    const double pos = position(t);
    return pos < on_ ? t + (on_ - pos) : t;
  }
  double next_online(std::uint32_t, double t) override {
    if (on_ <= 0.0) return kNever;
    const double pos = position(t);
    return pos < on_ ? t : t + (period_ - pos);
  }

 private:
  double position(double t) const {
    const double p = std::fmod(t + phase_, period_);
    return p < 0 ? p + period_ : p;
  }
  double period_, on_, phase_;
};

// Alternating exponential online/offline periods per client, drawn lazily from the
// ("availability", group, client) stream, so only clients the simulator asks about cost memory.
class Markov final : public AvailabilityModel {
 public:
  Markov(double mean_online, double mean_offline, std::uint64_t seed, std::uint32_t group)
      : mean_on_(mean_online), mean_off_(mean_offline), seed_(seed), group_(group) {}
  bool online(std::uint32_t client, double t) override {
    auto& h = history(client, t);
    const auto switches =
        static_cast<std::size_t>(std::upper_bound(h.switches.begin(), h.switches.end(), t) - h.switches.begin());
    return h.starts_online != (switches % 2 == 1);
  }
  double next_offline(std::uint32_t client, double t) override {
    if (!online(client, t)) return t;
    auto& h = history(client, t);
    return *std::upper_bound(h.switches.begin(), h.switches.end(), t);
  }
  double next_online(std::uint32_t client, double t) override {
    if (online(client, t)) return t;
    auto& h = history(client, t);
    return *std::upper_bound(h.switches.begin(), h.switches.end(), t);
  }

 private:
  struct History {
    Rng rng{0};
    bool starts_online = true;
    std::vector<double> switches;  // times at which the state flips
  };
  History& history(std::uint32_t client, double t) {
    auto it = clients_.find(client);
    if (it == clients_.end()) {
      History h;
      h.rng = make_stream(seed_, "availability", {group_, client});
      h.starts_online = h.rng.uniform() < mean_on_ / (mean_on_ + mean_off_);
      it = clients_.emplace(client, std::move(h)).first;
    }
    auto& h = it->second;
    // Extend one switch past t, so next_offline can read it.
    while (h.switches.empty() || h.switches.back() <= t) {
      const bool online_now = h.starts_online != (h.switches.size() % 2 == 1);
      const double start = h.switches.empty() ? 0.0 : h.switches.back();
      h.switches.push_back(start - (online_now ? mean_on_ : mean_off_) * std::log(h.rng.uniform_open()));
    }
    return h;
  }
  double mean_on_, mean_off_;
  std::uint64_t seed_;
  std::uint32_t group_;
  std::unordered_map<std::uint32_t, History> clients_;
};

// Online intervals per client from a CSV file; clients the file does not name are offline.
class Trace final : public AvailabilityModel {
 public:
  Trace(const std::string& path, std::uint32_t clients, TraceMapping mapping, std::uint64_t seed) {
    const auto t = read_csv(path, {"client", "start", "end"}, "availability trace");
    // A world in which nobody is ever online: refused before the run, as trace-info refuses it.
    if (t.rows.empty()) throw UserError(path + ": the trace has no intervals (nobody would ever be online)");
    const auto c = column_index(t, "client"), s = column_index(t, "start"), e = column_index(t, "end");
    const auto client_of = trace_rows_to_clients(t, clients, mapping, seed);
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const auto& r = t.rows[i];
      // Messages are built only for a bad row: traces run to millions of rows.
      auto refuse = [&](const std::string& what) {
        throw UserError(path + ":" + std::to_string(t.lines[i]) + ": " + what);
      };
      if (r[s] < 0) refuse("negative start time " + std::to_string(r[s]));
      if (!(r[e] <= kMaxVirtualSeconds)) refuse("an end time past 1e12 s (virtual times must stay finite)");
      if (r[e] <= r[s]) refuse("interval ends at or before it starts");
      if (client_of[i] < 0) continue;  // a trace client the seeded draw left out
      auto& list = intervals_[static_cast<std::uint32_t>(client_of[i])];
      if (!list.empty() && r[s] < list.back().second) {
        const auto named = " of trace client " + std::to_string(static_cast<long>(r[c]));
        refuse(r[s] < list.back().first ? "intervals" + named + " are not sorted by start"
                                        : "interval overlaps the previous one" + named);
      }
      list.emplace_back(r[s], r[e]);
    }
  }
  bool online(std::uint32_t client, double t) override {
    const auto* list = find(client);
    if (list == nullptr) return false;
    auto it = std::upper_bound(list->begin(), list->end(), std::make_pair(t, kNever));
    return it != list->begin() && t < std::prev(it)->second;
  }
  double next_offline(std::uint32_t client, double t) override {
    if (!online(client, t)) return t;
    const auto& list = *find(client);
    auto it = std::prev(std::upper_bound(list.begin(), list.end(), std::make_pair(t, kNever)));
    // Back-to-back intervals are one online period.
    while (std::next(it) != list.end() && std::next(it)->first <= it->second) ++it;
    return it->second;
  }
  double next_online(std::uint32_t client, double t) override {
    if (online(client, t)) return t;
    const auto* list = find(client);
    if (list == nullptr) return kNever;
    auto it = std::upper_bound(list->begin(), list->end(), std::make_pair(t, kNever));
    return it == list->end() ? kNever : it->first;
  }

 private:
  const std::vector<std::pair<double, double>>* find(std::uint32_t client) const {
    auto it = intervals_.find(client);
    return it == intervals_.end() ? nullptr : &it->second;
  }
  std::unordered_map<std::uint32_t, std::vector<std::pair<double, double>>> intervals_;
};

struct MarkovOptions {
  double mean_online = 3600.0;  // mean seconds online
  double mean_offline = 3600.0;
};

struct DiurnalOptions {
  double period = 86400.0;  // online for duty * period once per period, starting at -phase
  double duty = 0.5;
  double phase = 0.0;
};

struct TraceOptions {
  std::string trace;                               // CSV client,start,end online intervals
  TraceMapping trace_clients = TraceMapping::ids;  // ids: trace client k is client k | seeded (docs/traces.md)
  std::string trace_digest;                        // the trace's bytes' hash, recorded when resolved
};

struct NoOptions {};

}  // namespace

AvailabilityModelInfo always_availability_info() {
  return availability_info("always", "every client online all the time",
                           ParamTable<NoOptions>(std::vector<KeyBinding<NoOptions>>{}),
                           [](const NoOptions&, std::uint32_t, std::uint64_t, std::uint32_t, const Population*) {
                             return std::make_unique<AlwaysOnline>();
                           });
}

AvailabilityModelInfo markov_availability_info() {
  using O = MarkovOptions;
  const ParamTable<O> params(
      {bind_key<O>("mean_online", "mean online period, seconds", &O::mean_online).range(0.0, kMaxVirtualSeconds, true),
       bind_key<O>("mean_offline", "mean offline period, seconds", &O::mean_offline)
           .range(0.0, kMaxVirtualSeconds, true)});
  auto row = availability_info(
      "markov", "each client alternates exponential online and offline spells (mean_online, mean_offline)", params,
      [](const O& o, std::uint32_t, std::uint64_t seed, std::uint32_t group_tag, const Population*) {
        return std::make_unique<Markov>(o.mean_online, o.mean_offline, seed, group_tag);
      });
  row.cycle_seconds = params.reading([](const O& o) { return o.mean_online + o.mean_offline; });
  return row;
}

AvailabilityModelInfo diurnal_availability_info() {
  using O = DiurnalOptions;
  const ParamTable<O> params(
      {bind_key<O>("period", "cycle length, seconds", &O::period).range(0.0, kMaxVirtualSeconds, true),
       bind_key<O>("duty", "online fraction of each cycle", &O::duty).range(0.0, 1.0),
       bind_key<O>("phase", "seconds by which the cycle is advanced", &O::phase)
           .range(-kMaxVirtualSeconds, kMaxVirtualSeconds)});
  auto row = availability_info("diurnal", "online for duty x period once per period, from -phase: a day's cycle",
                               params, [](const O& o, std::uint32_t, std::uint64_t, std::uint32_t, const Population*) {
                                 return std::make_unique<Diurnal>(o.period, o.duty, o.phase);
                               });
  row.cycle_seconds = params.reading([](const O& o) { return o.period; });
  return row;
}

AvailabilityModelInfo trace_availability_info() {
  using O = TraceOptions;
  const ParamTable<O> params(
      {input_file(bind_key<O>("trace", "CSV client,start,end online intervals", &O::trace), "trace_digest"),
       bind_key<O>("trace_clients",
                   "ids: trace client k is client k | seeded: a seeded draw of the trace's clients, one per client",
                   &O::trace_clients),
       bind_key<O>(
           "trace_digest",
           "the trace's digest; written when the scenario is resolved, and a trace whose bytes differ is refused",
           &O::trace_digest)});
  return availability_info("trace", "online intervals per client from a CSV trace (docs/traces.md)", params,
                           [](const O& o, std::uint32_t clients, std::uint64_t seed, std::uint32_t, const Population*) {
                             if (o.trace.empty())
                               throw UserError("availability.model = \"trace\" needs availability.trace (a CSV file)");
                             return std::make_unique<Trace>(o.trace, clients, o.trace_clients, seed);
                           });
}

namespace {

Rows<AvailabilityModelInfo>& availability_rows() {
  static Rows<AvailabilityModelInfo> rows = [] {
    Rows<AvailabilityModelInfo> out = {always_availability_info(), markov_availability_info(),
                                       diurnal_availability_info(), trace_availability_info()};
    for (auto& p : participation_process_rows()) out.push_back(std::move(p));
    return out;
  }();
  return rows;
}

}  // namespace

const Rows<AvailabilityModelInfo>& availability_catalog() { return availability_rows(); }

void register_availability_model(AvailabilityModelInfo info) {
  add_row(availability_rows(), std::move(info), "availability model");
}

std::vector<std::string> availability_model_names() { return row_names(availability_catalog()); }

const AvailabilityModelInfo& availability_model(const std::string& name) {
  return row_named(availability_catalog(), name, "availability model");
}

std::unique_ptr<AvailabilityModel> make_availability_model(const AvailabilityConfig& c, std::uint32_t clients,
                                                           std::uint64_t seed, std::uint32_t group_tag,
                                                           const Population* population) {
  return availability_model(c.model).make(c.params, clients, seed, group_tag, population);
}

ClientAvailability::ClientAvailability(const Scenario& s, const Population& population)
    : population_(population), round_clock_(s.simulation.mode == SimulationMode::sync), forced_(s.groups.size() + 1) {
  for (std::uint32_t g = 0; g < s.groups.size(); ++g)
    models_.push_back(make_availability_model(s.groups[g].availability, population.size(), s.seed, g, &population));
  models_.push_back(make_availability_model(s.availability, population.size(), s.seed, kNoGroup, &population));
}

void ClientAvailability::set_round(std::uint32_t round) {
  if (!round_clock_) return;  // asynchronous modes have no rounds: processes step with time
  for (auto& m : models_) m->set_round(round);
}

std::optional<double> ClientAvailability::probability(std::uint32_t client, std::uint32_t round) {
  return model_of(client).probability(client, round);
}

AvailabilityModel& ClientAvailability::model_of(std::uint32_t client) {
  const auto g = population_.group[client];
  return *models_[g == kNoGroup ? models_.size() - 1 : g];
}

std::optional<bool> ClientAvailability::forced_state(std::uint32_t group, double t) const {
  if (group == kNoGroup) return std::nullopt;
  std::optional<bool> state;
  for (const auto& change : forced_[group]) {
    if (change.time > t) break;
    state = change.state;
  }
  return state;
}

void ClientAvailability::force(std::uint32_t group, double t, std::optional<bool> state) {
  auto& changes = forced_.at(group);
  auto it = std::upper_bound(changes.begin(), changes.end(), t, [](double v, const Change& c) { return v < c.time; });
  changes.insert(it, Change{t, state});
}

bool ClientAvailability::online(std::uint32_t client, double t) {
  if (auto forced = forced_state(population_.group[client], t)) return *forced;
  return model_of(client).online(client, t);
}

double ClientAvailability::offline_between(std::uint32_t client, double from, double until) {
  const auto group = population_.group[client];
  // Walk the segments between forced changes; inside each, either the forced state or the model rules.
  double start = from;
  std::vector<double> cuts;
  if (group != kNoGroup)
    for (const auto& c : forced_[group])
      if (c.time > from && c.time < until) cuts.push_back(c.time);
  cuts.push_back(until);
  for (double end : cuts) {
    const auto forced = forced_state(group, start);
    if (forced.has_value()) {
      if (!*forced) return start;
    } else {
      const double off = model_of(client).next_offline(client, start);
      if (off < end) return off;
    }
    start = end;
  }
  return kNever;
}

double ClientAvailability::next_online(std::uint32_t client, double from) {
  const auto group = population_.group[client];
  // The segments between forced changes, the last one unbounded.
  std::vector<double> cuts;
  if (group != kNoGroup)
    for (const auto& c : forced_[group])
      if (c.time > from) cuts.push_back(c.time);
  cuts.push_back(kNever);
  double start = from;
  for (double end : cuts) {
    const auto forced = forced_state(group, start);
    if (forced.has_value()) {
      if (*forced) return start;
    } else {
      const double on = model_of(client).next_online(client, start);
      if (on < end) return on;
    }
    start = end;
  }
  return kNever;
}

}  // namespace drift
