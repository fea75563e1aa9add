#pragma once
// From an RDP curve to (epsilon, delta) (docs/privacy.md#from-rdp-to-epsilon).
#include <vector>

namespace drift::privacy {

enum class Conversion {
  Dpa,     // Balle et al. 2020 / Canonne et al. 2020, as dp_accounting does it (the default)
  Opacus,  // the same formula on every order, without dp_accounting's guards (Opacus parity)
  Basic,   // Mironov 2017, Prop. 3: only for comparison
};

struct EpsilonAt {
  double epsilon = 0.0;
  double order = 0.0;  // the order that attains it; NaN where none does
};
struct DeltaAt {
  double delta = 0.0;
  double order = 0.0;
};

// The smallest epsilon over the orders at `delta`. Throws std::invalid_argument for delta < 0
// or orders and curve of different lengths.
EpsilonAt epsilon_from_rdp(const std::vector<double>& orders, const std::vector<double>& rdp, double delta,
                           Conversion rule = Conversion::Dpa);
// The smallest delta over the orders at `epsilon` (dp_accounting's rule).
DeltaAt delta_from_rdp(const std::vector<double>& orders, const std::vector<double>& rdp, double epsilon);

}  // namespace drift::privacy
