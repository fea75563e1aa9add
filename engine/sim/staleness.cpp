#include "engine/sim/staleness.hpp"

#include <cmath>

namespace drift {

double StalenessFunction::operator()(std::uint64_t staleness) const {
  const auto s = static_cast<double>(staleness);
  if (kind == "polynomial") return std::pow(s + 1.0, -a);
  if (kind == "hinge") return s <= b ? 1.0 : 1.0 / (a * (s - b) + 1.0);
  return 1.0;
}

}  // namespace drift
