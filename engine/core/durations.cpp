#include "engine/core/durations.hpp"

#include <cstdio>

namespace drift {

std::string human_duration(double s) {
  char buf[48];
  if (s < 120)
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (s < 2 * 3600)
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else if (s < 3 * 86400)
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  else
    std::snprintf(buf, sizeof buf, "%.1f days", s / 86400);
  return buf;
}

}  // namespace drift
