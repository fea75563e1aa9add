#include "engine/privacy/conversion.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "engine/privacy/log_math.hpp"

namespace drift::privacy {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void check_sizes(const std::vector<double>& orders, const std::vector<double>& rdp) {
  if (orders.size() != rdp.size() || orders.empty())
    throw std::invalid_argument("an RDP curve needs one value per order");
}

double dpa_candidate(double alpha, double r, double delta) {
  if (r < 0) return 0.0;                               // a rounding artefact: no loss at all
  if (delta * delta + std::expm1(-r) > 0) return 0.0;  // the KL route already gives delta
  if (alpha > 1.01) return r + std::log1p(-1 / alpha) - std::log(delta * alpha) / (alpha - 1);
  return kInf;  // too close to 1 to be useful
}
}  // namespace

EpsilonAt epsilon_from_rdp(const std::vector<double>& orders, const std::vector<double>& rdp, double delta,
                           Conversion rule) {
  check_sizes(orders, rdp);
  if (!(delta >= 0)) throw std::invalid_argument("delta must be >= 0");
  if (delta == 0) {
    for (double r : rdp)
      if (r != 0) return {kInf, kNaN};
    return {0.0, kNaN};
  }
  EpsilonAt best{kInf, kNaN};
  for (std::size_t j = 0; j < orders.size(); ++j) {
    const double a = orders[j], r = rdp[j];
    double e = kNaN;
    if (rule == Conversion::Dpa)
      e = dpa_candidate(a, r, delta);
    else if (rule == Conversion::Opacus)
      e = r - (std::log(delta) + std::log(a)) / (a - 1) + std::log((a - 1) / a);
    else
      e = r + std::log(1 / delta) / (a - 1);
    if (!std::isnan(e) && e < best.epsilon) best = {e, a};
  }
  if (rule == Conversion::Dpa) best.epsilon = std::fmax(0.0, best.epsilon);
  return best;
}

DeltaAt delta_from_rdp(const std::vector<double>& orders, const std::vector<double>& rdp, double epsilon) {
  check_sizes(orders, rdp);
  if (!(epsilon >= 0)) throw std::invalid_argument("epsilon must be >= 0");
  double best_log = kInf, best_order = kNaN;
  for (std::size_t j = 0; j < orders.size(); ++j) {
    const double a = orders[j], r = rdp[j];
    double log_delta = r <= 0 ? -kInf : 0.5 * std::log1p(-std::exp(-r));
    if (a > 1.01) log_delta = std::fmin(log_delta, (a - 1) * (r - epsilon + std::log1p(-1 / a)) - std::log(a));
    if (log_delta < best_log) {
      best_log = log_delta;
      best_order = a;
    }
  }
  return {std::fmin(std::exp(best_log), 1.0), best_order};
}

}  // namespace drift::privacy
