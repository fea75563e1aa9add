#pragma once
// Rényi-DP curves of one Gaussian release, with and without amplification by sampling
// (docs/privacy.md#the-accountant). `z` is the noise multiplier: the noise's standard deviation
// over the L2 sensitivity of the released sum under the adjacency in use.
#include <vector>

namespace drift::privacy {

// How the infinite series of a Poisson-subsampled Gaussian at a fractional order is summed.
enum class FracMode {
  Abs,     // every term added by magnitude: an upper bound (dp_accounting since 2024; the default)
  Signed,  // terms added with their signs: exact (Opacus); needed to match Opacus's numbers
};

// RDP at order `alpha` of the Gaussian mechanism alone: alpha / (2 z^2).
double rdp_gaussian(double z, double alpha);
// RDP at `alpha` of the Gaussian mechanism on a Poisson sample of rate `q` (add/remove or
// replace-with-special neighbours). Throws std::invalid_argument for q outside [0, 1] or z < 0.
// A fractional order whose Abs series does not converge in 1000 terms gives +inf.
double rdp_poisson_gaussian(double q, double z, double alpha, FracMode mode = FracMode::Abs);
// RDP at `alpha` of the Gaussian mechanism on a sample of fixed size m = q N drawn without
// replacement (replace-one neighbours; `z_hat` relative to that sensitivity).
double rdp_wor_gaussian(double q, double z_hat, double alpha);

// The order grids: dp_accounting's default (1.1..10.9, 11..63, 128, 256, 512, 1024: 156 orders)
// and Opacus's (1.1..10.9, 12..63: 151 orders).
std::vector<double> dpa_orders();
std::vector<double> opacus_orders();

}  // namespace drift::privacy
