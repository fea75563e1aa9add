#pragma once
// Durations as a person reads them: "42.0 s", "12.5 min", "3.2 h", "2.0 days".
#include <string>

namespace drift {

std::string human_duration(double seconds);

}  // namespace drift
