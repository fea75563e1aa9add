#pragma once
// Staleness weights s(t - tau) of FedAsync (spec section 6.9).
#include <cstdint>
#include <string>

namespace drift {

struct StalenessFunction {
  std::string kind = "polynomial";  // constant | polynomial | hinge
  double a = 0.5;
  double b = 4.0;
  // constant: 1; polynomial: (s + 1)^-a; hinge: 1 if s <= b else 1 / (a (s - b) + 1).
  double operator()(std::uint64_t staleness) const;
};

}  // namespace drift
