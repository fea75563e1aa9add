#pragma once
// A scenario table as TOML text that reads back to the same values, bit for bit: floats in
// the shortest form that round-trips (0.7 as 0.7, 1250000.25 in full). toml++ 3.3 as Debian
// builds it offers either 17 digits (0.050000000000000003) or 6 (1250000.25 as 1.25e+06).
#include <toml++/toml.h>

#include <string>

namespace drift {

std::string toml_text(const toml::table& root);

}  // namespace drift
