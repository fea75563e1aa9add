#include "engine/sim/staleness.hpp"

#include <cmath>

namespace drift {

double StalenessFunction::operator()(std::uint64_t staleness) const {
  const auto s = static_cast<double>(staleness);
  switch (kind) {
    case StalenessKind::polynomial:
      return std::pow(s + 1.0, -a);
    case StalenessKind::hinge:
      return s <= b ? 1.0 : 1.0 / (a * (s - b) + 1.0);
    case StalenessKind::constant:
      break;
  }
  return 1.0;
}

}  // namespace drift
