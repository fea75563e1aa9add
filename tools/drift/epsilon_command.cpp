// drift epsilon: the privacy of a DP-FedAvg schedule, offline (docs/privacy.md#drift-epsilon).
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "engine/core/error.hpp"
#include "engine/privacy/accountant.hpp"

namespace drift::cli {
namespace {

using namespace drift::privacy;

AccountantOptions accountant_options(const EpsilonArgs& args) {
  if (args.opacus) return {opacus_orders(), FracMode::Signed, Conversion::Opacus};
  return {};
}

// Replace-one neighbours (fixed-size cohorts) change one clipped update for another: the sum's
// sensitivity is 2C, so the accountant sees half the scenario's noise multiplier.
double accountant_noise(Sampling sampling, double z) { return sampling == Sampling::FixedSize ? z / 2 : z; }

void check(const EpsilonArgs& args, Sampling sampling) {
  if (!(args.delta > 0 && args.delta < 1))
    throw UserError("--delta must be in (0, 1), got " + std::to_string(args.delta));
  // A signed option: "-1" read into an unsigned one would wrap around to 2^64 - 1 releases.
  if (args.steps < 1) throw UserError("--steps must be at least 1, got " + std::to_string(args.steps));
  if (sampling != Sampling::None && !(args.rate > 0 && args.rate <= 1))
    throw UserError("--rate must be in (0, 1] for " + sampling_name(sampling) + " sampling");
  if (args.noise && !(*args.noise >= 0)) throw UserError("--noise must be >= 0");
  if (args.epsilon && !(*args.epsilon > 0 && std::isfinite(*args.epsilon)))
    throw UserError("--epsilon must be a finite number > 0");
  if (!args.noise && !args.epsilon) throw UserError("give --noise Z (what epsilon?) or --epsilon E (what noise?)");
}

std::string schedule_text(const EpsilonArgs& args, Sampling sampling) {
  char text[256];
  if (sampling == Sampling::Poisson)
    std::snprintf(text, sizeof text, "%lld releases, each client in each independently with probability %.6g",
                  static_cast<long long>(args.steps), args.rate);
  else if (sampling == Sampling::FixedSize)
    std::snprintf(text, sizeof text,
                  "%lld releases, each of a fixed-size cohort (a fraction %.6g of the clients, drawn without "
                  "replacement)",
                  static_cast<long long>(args.steps), args.rate);
  else
    std::snprintf(text, sizeof text, "%lld releases in which a client takes part, no amplification by sampling",
                  static_cast<long long>(args.steps));
  return text;
}

void print_accountant(const EpsilonArgs& args, Sampling sampling) {
  const auto adjacency = sampling == Sampling::FixedSize ? Adjacency::ReplaceOne : Adjacency::AddRemove;
  std::printf("  neighbours: %s (one client's whole data)%s\n", adjacency_name(adjacency).c_str(),
              sampling == Sampling::FixedSize ? "; sensitivity 2C, so the accountant uses z/2" : "");
  std::printf("  accountant: RDP over %s; %s\n",
              args.opacus ? "Opacus's 151 orders, signed series, Opacus's conversion"
                          : "dp_accounting's 156 orders, absolute series (an upper bound), dp_accounting's conversion",
              args.opacus ? "the numbers Opacus prints" : "the default");
}

std::string order_text(double order) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", order);
  return std::isnan(order) ? std::string("none") : std::string(text);
}

}  // namespace

int epsilon_command(const EpsilonArgs& args) {
  Sampling sampling;
  try {
    sampling = parse_sampling(args.sampling);
  } catch (const std::invalid_argument& e) {
    throw UserError(std::string("--sampling: ") + e.what());
  }
  check(args, sampling);
  const auto options = accountant_options(args);
  const auto adjacency = sampling == Sampling::FixedSize ? Adjacency::ReplaceOne : Adjacency::AddRemove;
  const double q = sampling == Sampling::None ? 1.0 : args.rate;
  const auto releases = static_cast<std::uint64_t>(args.steps);  // >= 1, checked
  double z = args.noise.value_or(0);
  if (args.epsilon) {
    try {
      z = calibrate_noise(*args.epsilon, args.delta, sampling, q, releases, options) *
          (sampling == Sampling::FixedSize ? 2 : 1);
    } catch (const std::invalid_argument& e) {
      throw UserError(std::string("--epsilon ") + std::to_string(*args.epsilon) + ": " + e.what());
    }
  }
  RdpAccountant accountant(options);
  accountant.compose(sampling, q, accountant_noise(sampling, z), releases, adjacency);
  const auto eps = accountant.epsilon(args.delta);
  if (args.epsilon)
    std::printf(
        "noise multiplier %.6g (sigma / C) keeps epsilon within %.6g: epsilon = %.6g at delta = %g (order %s)\n", z,
        *args.epsilon, eps.epsilon, args.delta, order_text(eps.order).c_str());
  else
    std::printf("epsilon = %.6g at delta = %g (order %s)\n", eps.epsilon, args.delta, order_text(eps.order).c_str());
  std::printf("  schedule: %s, noise multiplier %.6g\n", schedule_text(args, sampling).c_str(), z);
  print_accountant(args, sampling);
  if (sampling != Sampling::None) {
    RdpAccountant unamplified(options);
    unamplified.compose(Sampling::None, 1, z, releases);
    std::printf("  without amplification (every release counted whole): epsilon = %.6g\n",
                unamplified.epsilon(args.delta).epsilon);
  }
  return 0;
}

}  // namespace drift::cli
