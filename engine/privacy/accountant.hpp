#pragma once
// An RDP accountant: a curve over a grid of orders that each release adds to
// (docs/privacy.md#the-accountant). Plain C++, no LibTorch, no actors.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/privacy/conversion.hpp"
#include "engine/privacy/rdp.hpp"

namespace drift::privacy {

// Which datasets count as neighbours: one client added or removed, one client replaced by
// another, or one client replaced by the zero update.
enum class Adjacency { AddRemove, ReplaceOne, ReplaceSpecial };

// How the clients of a release were chosen, as far as the accountant may rely on it.
enum class Sampling {
  Poisson,    // each client independently with probability q: amplification (add/remove)
  FixedSize,  // exactly m = q N clients without replacement: amplification (replace-one)
  None,       // no amplification: each participation costs a whole Gaussian release
};

struct AccountantOptions {
  std::vector<double> orders = dpa_orders();
  FracMode frac_mode = FracMode::Abs;
  Conversion conversion = Conversion::Dpa;
};

class RdpAccountant {
 public:
  explicit RdpAccountant(AccountantOptions options = {});
  // `count` releases with noise multiplier z (relative to the sensitivity under `adjacency`),
  // each on clients chosen by `sampling` at rate q. Throws std::invalid_argument for a
  // combination the analysis does not cover (Poisson with replace-one, fixed size without it).
  void compose(Sampling sampling, double q, double z, std::uint64_t count = 1,
               Adjacency adjacency = Adjacency::AddRemove);
  EpsilonAt epsilon(double delta) const;
  DeltaAt delta(double epsilon) const;
  const std::vector<double>& orders() const { return options_.orders; }
  const std::vector<double>& curve() const { return rdp_; }

 private:
  AccountantOptions options_;
  std::vector<double> rdp_;
};

// The RDP curve of one release (what compose() adds, per release).
std::vector<double> release_curve(const AccountantOptions& options, Sampling sampling, double q, double z,
                                  Adjacency adjacency = Adjacency::AddRemove);

// The smallest noise multiplier (to `tolerance` in epsilon, always on the safe side) whose
// `steps` releases at rate q stay within (target_epsilon, delta): Opacus's doubling and
// bisection. Throws std::invalid_argument when no multiplier up to 1e6 reaches it.
double calibrate_noise(double target_epsilon, double delta, Sampling sampling, double q, std::uint64_t steps,
                       const AccountantOptions& options = {}, double tolerance = 0.01);

// Names for flags and reports: "poisson", "fixed", "none"; "add_remove", "replace_one",
// "replace_special"; "abs", "signed"; "dpa", "opacus", "basic". parse_* throw
// std::invalid_argument naming the choices.
std::string sampling_name(Sampling s);
Sampling parse_sampling(const std::string& name);
Adjacency parse_adjacency(const std::string& name);
std::string adjacency_name(Adjacency a);

}  // namespace drift::privacy
