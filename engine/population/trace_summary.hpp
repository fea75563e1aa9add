#pragma once
// What a trace file holds, for `drift trace-info`: how many clients, over what span, how much
// of the time they are online and when in the day; or how fast and well connected they are.
#include <array>
#include <string>
#include <vector>

#include "engine/population/csv_table.hpp"

namespace drift {

enum class TraceKind { availability, profile };

// Which of drift's two trace formats a CSV is, from its header (client,start,end or
// client,speed,up_bandwidth,down_bandwidth,latency). Throws UserError for neither.
TraceKind trace_kind_of(const std::string& path);

struct AvailabilitySummary {
  std::size_t clients = 0, intervals = 0;
  double lowest_id = 0, highest_id = 0;
  double start = 0, end = 0;    // the first interval's start, the last one's end
  double online_fraction = 0;   // online client-seconds / (clients x (end - start))
  std::size_t most_online = 0;  // the most clients online at one moment
  // Hour of the day (time mod 24 h): the fraction of the clients online during that hour,
  // over every day of the span; negative for an hour the span never reaches.
  std::array<double, 24> online_by_hour{};
};

// Reads and checks the trace as a run would (sorted, non-overlapping intervals per client).
AvailabilitySummary summarise_availability(const std::string& path);

struct Spread {
  double min = 0, p10 = 0, median = 0, p90 = 0, max = 0;
};
Spread spread_of(std::vector<double> values);  // nearest-rank percentiles; values non-empty

struct ProfileSummary {
  std::size_t clients = 0;
  double lowest_id = 0, highest_id = 0;
  Spread speed, up_bandwidth, down_bandwidth, latency;
};

ProfileSummary summarise_profile(const std::string& path);

}  // namespace drift
