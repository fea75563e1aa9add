#pragma once
// Staleness weights s(t - tau) of FedAsync (docs/algorithms.md, "FedAsync").
#include <cstdint>

#include "engine/config/choices.hpp"

namespace drift {

struct StalenessFunction {
  StalenessKind kind = StalenessKind::polynomial;
  double a = 0.5;
  double b = 4.0;
  // constant: 1; polynomial: (s + 1)^-a; hinge: 1 if s <= b else 1 / (a (s - b) + 1).
  double operator()(std::uint64_t staleness) const;
};

}  // namespace drift
