#include "engine/privacy/accountant.hpp"

#include <cmath>
#include <stdexcept>

namespace drift::privacy {

std::vector<double> release_curve(const AccountantOptions& options, Sampling sampling, double q, double z,
                                  Adjacency adjacency) {
  if (sampling == Sampling::Poisson && adjacency == Adjacency::ReplaceOne)
    throw std::invalid_argument("Poisson sampling is analysed for add/remove or replace-special neighbours only");
  if (sampling == Sampling::FixedSize && adjacency != Adjacency::ReplaceOne)
    throw std::invalid_argument("fixed-size sampling is analysed for replace-one neighbours only");
  std::vector<double> curve;
  curve.reserve(options.orders.size());
  for (double alpha : options.orders) {
    if (sampling == Sampling::Poisson)
      curve.push_back(rdp_poisson_gaussian(q, z, alpha, options.frac_mode));
    else if (sampling == Sampling::FixedSize)
      curve.push_back(rdp_wor_gaussian(q, z, alpha));
    else
      curve.push_back(rdp_gaussian(z, alpha));
  }
  return curve;
}

RdpAccountant::RdpAccountant(AccountantOptions options)
    : options_(std::move(options)), rdp_(options_.orders.size(), 0.0) {
  for (std::size_t j = 0; j < options_.orders.size(); ++j)
    if (!(options_.orders[j] >= 1) || (j > 0 && !(options_.orders[j] > options_.orders[j - 1])))
      throw std::invalid_argument("RDP orders must be >= 1 and strictly increasing");
}

void RdpAccountant::compose(Sampling sampling, double q, double z, std::uint64_t count, Adjacency adjacency) {
  if (count == 0) return;
  const auto curve = release_curve(options_, sampling, q, z, adjacency);
  for (std::size_t j = 0; j < rdp_.size(); ++j)
    if (curve[j] != 0) rdp_[j] += static_cast<double>(count) * curve[j];
}

EpsilonAt RdpAccountant::epsilon(double delta) const {
  return epsilon_from_rdp(options_.orders, rdp_, delta, options_.conversion);
}

DeltaAt RdpAccountant::delta(double epsilon) const { return delta_from_rdp(options_.orders, rdp_, epsilon); }

double calibrate_noise(double target_epsilon, double delta, Sampling sampling, double q, std::uint64_t steps,
                       const AccountantOptions& options, double tolerance) {
  if (!(target_epsilon > 0)) throw std::invalid_argument("the target epsilon must be > 0");
  const Adjacency adjacency = sampling == Sampling::FixedSize ? Adjacency::ReplaceOne : Adjacency::AddRemove;
  const auto epsilon_at = [&](double z) {
    RdpAccountant accountant(options);
    accountant.compose(sampling, q, z, steps, adjacency);
    return accountant.epsilon(delta).epsilon;
  };
  double lo = 0, hi = 10, eps_hi = std::numeric_limits<double>::infinity();
  while (eps_hi > target_epsilon) {
    hi *= 2;
    if (hi > 1e6) throw std::invalid_argument("no noise multiplier up to 1e6 reaches this epsilon");
    eps_hi = epsilon_at(hi);
  }
  // Bisection until epsilon is within `tolerance` below the target. A huge target cannot get
  // that close in doubles (their spacing there exceeds it): the interval then stops shrinking,
  // and the noise found so far (whose epsilon is within the target) is the answer.
  for (int i = 0; i < 400 && target_epsilon - eps_hi > tolerance; ++i) {
    const double mid = (lo + hi) / 2;
    if (!(mid > lo && mid < hi)) break;
    const double eps_mid = epsilon_at(mid);
    if (eps_mid < target_epsilon) {
      hi = mid;
      eps_hi = eps_mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

std::string sampling_name(Sampling s) {
  return s == Sampling::Poisson ? "poisson" : s == Sampling::FixedSize ? "fixed" : "none";
}

Sampling parse_sampling(const std::string& name) {
  if (name == "poisson") return Sampling::Poisson;
  if (name == "fixed") return Sampling::FixedSize;
  if (name == "none") return Sampling::None;
  throw std::invalid_argument("unknown sampling '" + name + "' (poisson, fixed or none)");
}

std::string adjacency_name(Adjacency a) {
  return a == Adjacency::AddRemove ? "add_remove" : a == Adjacency::ReplaceOne ? "replace_one" : "replace_special";
}

Adjacency parse_adjacency(const std::string& name) {
  if (name == "add_remove") return Adjacency::AddRemove;
  if (name == "replace_one") return Adjacency::ReplaceOne;
  if (name == "replace_special") return Adjacency::ReplaceSpecial;
  throw std::invalid_argument("unknown adjacency '" + name + "' (add_remove, replace_one or replace_special)");
}

}  // namespace drift::privacy
