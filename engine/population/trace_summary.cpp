#include "engine/population/trace_summary.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "engine/core/error.hpp"
#include "engine/core/input_file.hpp"
#include "engine/population/availability.hpp"

namespace drift {
namespace {

constexpr double kHour = 3600.0, kDay = 24 * kHour;

// Adds the seconds of [s, e) that fall in each hour of the day to `bins`.
void add_by_hour(std::array<double, 24>& bins, double s, double e) {
  if (e - s >= kDay) {  // whole days in one step, so a week-long interval costs no more than an hour
    const double days = std::floor((e - s) / kDay);
    for (auto& b : bins) b += days * kHour;
    s += days * kDay;
  }
  while (s < e) {
    const double hour_end = (std::floor(s / kHour) + 1) * kHour;
    const double stop = std::min(e, hour_end);
    bins[static_cast<std::size_t>(std::fmod(std::floor(s / kHour), 24.0))] += stop - s;
    s = stop;
  }
}

std::string first_header(const std::string& path) {
  auto in = open_input_file(path, "trace file (CSV)");
  for (std::string line; read_trace_line(in, line, path);) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] != '#') return line;
  }
  throw UserError(path + ": empty trace file");
}

}  // namespace

TraceKind trace_kind_of(const std::string& path) {
  const auto header = first_header(path);
  if (header.find("start") != std::string::npos) return TraceKind::availability;
  if (header.find("speed") != std::string::npos) return TraceKind::profile;
  throw UserError(path +
                  ": neither an availability trace (client,start,end) nor a profile trace "
                  "(client,speed,up_bandwidth,down_bandwidth,latency); its header is '" +
                  header + "'");
}

AvailabilitySummary summarise_availability(const std::string& path) {
  const auto t = read_csv(path, {"client", "start", "end"}, "availability trace");
  const auto c = column_index(t, "client"), s = column_index(t, "start"), e = column_index(t, "end");
  AvailabilitySummary out;
  if (t.rows.empty()) throw UserError(path + ": the trace has no intervals");
  std::set<double> ids;
  for (const auto& r : t.rows) ids.insert(r[c]);
  // Checked as a run checks it, by the model a run builds: ids, times, order, overlaps.
  AvailabilityConfig config;
  config.model = "trace";
  config.params.set("trace", path);
  make_availability_model(config, static_cast<std::uint32_t>(std::clamp(*ids.rbegin() + 1, 0.0, 4e9)), 0, 0);
  std::vector<std::pair<double, int>> events;
  std::array<double, 24> online{}, reach{};
  double total = 0;
  out.start = t.rows.front()[s];
  out.end = t.rows.front()[e];
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    out.start = std::min(out.start, r[s]);
    out.end = std::max(out.end, r[e]);
    total += r[e] - r[s];
    add_by_hour(online, r[s], r[e]);
    events.emplace_back(r[s], +1);
    events.emplace_back(r[e], -1);
  }
  out.clients = ids.size();
  out.intervals = t.rows.size();
  out.lowest_id = *ids.begin();
  out.highest_id = *ids.rbegin();
  out.online_fraction = total / (static_cast<double>(out.clients) * (out.end - out.start));
  std::sort(events.begin(), events.end());  // an end sorts before a start at the same time
  long now = 0;
  for (const auto& [time, step] : events)
    out.most_online = std::max<std::size_t>(out.most_online, static_cast<std::size_t>(now += step));
  add_by_hour(reach, out.start, out.end);
  for (std::size_t h = 0; h < 24; ++h)
    out.online_by_hour[h] = reach[h] > 0 ? online[h] / (reach[h] * static_cast<double>(out.clients)) : -1.0;
  return out;
}

Spread spread_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) {
    return v[static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - (q > 0 ? 1 : 0)];
  };
  return {v.front(), rank(0.1), rank(0.5), rank(0.9), v.back()};
}

ProfileSummary summarise_profile(const std::string& path) {
  const auto t = read_csv(path, {"client", "speed", "up_bandwidth", "down_bandwidth", "latency"}, "profile trace");
  if (t.rows.empty()) throw UserError(path + ": the trace has no clients");
  std::vector<double> ids, columns[4];
  const char* names[4] = {"speed", "up_bandwidth", "down_bandwidth", "latency"};
  for (const auto& r : t.rows) {
    ids.push_back(r[column_index(t, "client")]);
    for (int k = 0; k < 4; ++k) columns[k].push_back(r[column_index(t, names[k])]);
  }
  ProfileSummary out;
  std::sort(ids.begin(), ids.end());
  out.clients = static_cast<std::size_t>(std::unique(ids.begin(), ids.end()) - ids.begin());
  out.lowest_id = ids.front();
  out.highest_id = ids[out.clients - 1];
  out.speed = spread_of(columns[0]);
  out.up_bandwidth = spread_of(columns[1]);
  out.down_bandwidth = spread_of(columns[2]);
  out.latency = spread_of(columns[3]);
  return out;
}

}  // namespace drift
