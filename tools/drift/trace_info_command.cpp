// drift trace-info FILE: what an availability or profile trace holds, before a run uses it.
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "engine/population/trace_summary.hpp"

namespace drift::cli {
namespace {

std::string duration_text(double seconds) {
  char text[64];
  if (seconds >= 2 * 86400)
    std::snprintf(text, sizeof text, "%.1f days", seconds / 86400);
  else if (seconds >= 2 * 3600)
    std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
  else
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  return text;
}

void print_availability(const std::string& path) {
  const auto s = summarise_availability(path);
  std::printf("availability trace %s\n", path.c_str());
  std::printf("  clients    %zu (ids %.0f to %.0f), %zu intervals, %.1f per client\n", s.clients, s.lowest_id,
              s.highest_id, s.intervals, static_cast<double>(s.intervals) / static_cast<double>(s.clients));
  std::printf("  span       %.0f s to %.0f s (%s)\n", s.start, s.end, duration_text(s.end - s.start).c_str());
  std::printf("  online     %.1f %% of client-time over the span; at most %zu clients at once\n",
              100 * s.online_fraction, s.most_online);
  std::printf("  by hour of the day (time mod 24 h), share of the clients online:\n");
  for (std::size_t h = 0; h < 24; ++h) {
    const double f = s.online_by_hour[h];
    if (f < 0) {
      std::printf("    %02zu:00   -      (the span never reaches this hour)\n", h);
      continue;
    }
    std::printf("    %02zu:00 %5.1f %% %s\n", h, 100 * f,
                std::string(static_cast<std::size_t>(f * 40 + 0.5), '#').c_str());
  }
}

void print_spread(const char* name, const Spread& s) {
  std::printf("  %-15s %12.4g %12.4g %12.4g %12.4g %12.4g\n", name, s.min, s.p10, s.median, s.p90, s.max);
}

void print_profile(const std::string& path) {
  const auto s = summarise_profile(path);
  std::printf("profile trace %s\n", path.c_str());
  std::printf("  clients    %zu (ids %.0f to %.0f)\n", s.clients, s.lowest_id, s.highest_id);
  std::printf("  %-15s %12s %12s %12s %12s %12s\n", "", "min", "p10", "median", "p90", "max");
  print_spread("speed (samp/s)", s.speed);
  print_spread("up (B/s)", s.up_bandwidth);
  print_spread("down (B/s)", s.down_bandwidth);
  print_spread("latency (s)", s.latency);
}

}  // namespace

int trace_info_command(const std::string& path) {
  if (trace_kind_of(path) == TraceKind::availability)
    print_availability(path);
  else
    print_profile(path);
  return 0;
}

}  // namespace drift::cli
