// The RDP accountant against the test vectors of dp_accounting, Opacus and TF-Privacy, and the
// spec's own (docs/privacy.md#the-accountant lists where each comes from).
#include "catch_torch.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "engine/privacy/accountant.hpp"

using namespace drift::privacy;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> curve_of(Sampling sampling, double q, double z, std::uint64_t steps,
                             const AccountantOptions& options = {}) {
  RdpAccountant accountant(options);
  accountant.compose(sampling, q, z, steps,
                     sampling == Sampling::FixedSize ? Adjacency::ReplaceOne : Adjacency::AddRemove);
  return accountant.curve();
}

EpsilonAt epsilon_of(Sampling sampling, double q, double z, std::uint64_t steps, double delta,
                     const AccountantOptions& options = {}) {
  RdpAccountant accountant(options);
  accountant.compose(sampling, q, z, steps,
                     sampling == Sampling::FixedSize ? Adjacency::ReplaceOne : Adjacency::AddRemove);
  return accountant.epsilon(delta);
}

AccountantOptions opacus_mode() { return {opacus_orders(), FracMode::Signed, Conversion::Opacus}; }

std::vector<double> range_orders(double from, double step, int count) {
  std::vector<double> orders;
  for (int i = 0; i < count; ++i) orders.push_back(from + step * i);
  return orders;
}
}  // namespace

TEST_CASE("Poisson RDP: dp_accounting's vector D1 and the closed form at order 2", "[privacy]") {
  const std::vector<double> orders{1.5, 2.5, 5, 50, 100, kInf};
  const auto rdp = curve_of(Sampling::Poisson, 0.01, 2.5, 50, {orders});
  const std::vector<double> want{6.70579740668e-04, 1.08548710439e-03, 2.18075656231e-03, 2.38460375387e-02,
                                 167.416307548};
  for (std::size_t j = 0; j < want.size(); ++j) CHECK(rdp[j] == Approx(want[j]).epsilon(1e-9));
  CHECK(rdp[5] == kInf);
  // X12: RDP(2) = log1p(q^2 expm1(1/z^2)).
  CHECK(rdp_poisson_gaussian(0.01, 2.5, 2) == Approx(1.735093657080e-05).epsilon(1e-11));
  CHECK(rdp_poisson_gaussian(0.01, 2.5, 2) == Approx(std::log1p(1e-4 * std::expm1(1 / 6.25))).epsilon(1e-12));
}

TEST_CASE("Poisson RDP: the stress cases of log A (table 4.1b), Abs and Signed", "[privacy]") {
  struct Case {
    double q, sigma, alpha, abs, signed_;
  };
  const std::vector<Case> cases{{1e-7, 0.1, 1.01, 4.003413619537e-08, 4.003413624853e-08},
                                {1e-6, 0.1, 256, 3.260463229297e+06, 3.260463229297e+06},
                                {1e-5, 0.1, 256.1, 3.263607039788e+06, 3.263607039788e+06},
                                {1e-6, 1, 27, 8.769511305033e-10, 8.769511305033e-10},
                                {1e-4, 1, 1.5, 6.445198025302e-09, 6.442687330162e-09},
                                {1e-3, 1, 2, 1.718280352214e-06, 1.718280352214e-06},
                                {0.01, 10, 20, 1.912969991284e-04, 1.912969991284e-04},
                                {0.1, 100, 20.5, 1.999181845790e-04, 1.999181845796e-04},
                                {0.99, 0.1, 256, 3.263997427114e+06, 3.263997427114e+06},
                                {0.999, 100, 256.1, 3.260108037973e+00, 3.260108037973e+00}};
  for (const auto& c : cases) {
    INFO("q " << c.q << " sigma " << c.sigma << " alpha " << c.alpha);
    const double log_a_abs = rdp_poisson_gaussian(c.q, c.sigma, c.alpha, FracMode::Abs) * (c.alpha - 1);
    const double log_a_signed = rdp_poisson_gaussian(c.q, c.sigma, c.alpha, FracMode::Signed) * (c.alpha - 1);
    CHECK(log_a_abs == Approx(c.abs).epsilon(1e-9));
    CHECK(log_a_signed == Approx(c.signed_).epsilon(1e-9));
  }
  // The two series differ in the 4th digit at Opacus's optimal order.
  CHECK(rdp_poisson_gaussian(0.04, 1.5, 3.9, FracMode::Signed) == Approx(0.0018332021995636277).epsilon(1e-10));
  CHECK(rdp_poisson_gaussian(0.04, 1.5, 3.9, FracMode::Abs) == Approx(0.0018333015466494985).epsilon(1e-10));
}

TEST_CASE("Poisson RDP: the edges and the refusals (D4, D6, D7, D11, D12, D15)", "[privacy]") {
  CHECK(rdp_poisson_gaussian(0, 1, 5) == 0.0);
  CHECK(rdp_poisson_gaussian(0, 0, 5) == 0.0);
  CHECK(epsilon_of(Sampling::Poisson, 0, 1, 10, 1e-10).epsilon == 0.0);
  RdpAccountant nothing;
  nothing.compose(Sampling::Poisson, 0, 0, 3);
  CHECK(nothing.delta(1e-10).delta == 0.0);
  CHECK(epsilon_of(Sampling::None, 1, 0, 1, 0.1).epsilon == kInf);
  CHECK(rdp_gaussian(2.71828, 3.14159) == Approx(3.14159 / (2 * 2.71828 * 2.71828)).epsilon(1e-12));
  for (double a = 58.5; a <= 59.5 + 1e-9; a += 0.05) CHECK(rdp_poisson_gaussian(0.4, 12, a) > 0);
  const auto orders = dpa_orders();
  std::vector<double> diverged;
  for (double a : orders)
    if (std::isinf(rdp_poisson_gaussian(0.1, 1, a))) diverged.push_back(a);
  CHECK(diverged == std::vector<double>{1.1, 1.2, 1.3, 1.4, 1.5});
  CHECK(std::isfinite(epsilon_of(Sampling::Poisson, 0.1, 1, 1, 1e-5).epsilon));
  CHECK_THROWS_WITH(rdp_poisson_gaussian(-0.1, 1, 2), Catch::Contains("Sampling rate"));
  CHECK_THROWS_WITH(rdp_poisson_gaussian(1.1, 1, 2), Catch::Contains("Sampling rate"));
  RdpAccountant refuses;
  CHECK_THROWS_AS(refuses.compose(Sampling::Poisson, 0.1, 1, 1, Adjacency::ReplaceOne), std::invalid_argument);
  CHECK_THROWS_AS(refuses.compose(Sampling::FixedSize, 0.1, 1, 1, Adjacency::AddRemove), std::invalid_argument);
  CHECK(orders.size() == 156);
  CHECK(opacus_orders().size() == 151);
}

TEST_CASE("RDP to epsilon and delta: dp_accounting's D2, D3, D9 and D10", "[privacy]") {
  const auto orders = range_orders(2, 1, 31);
  const std::vector<double> flat(orders.size(), 1.1);
  const auto eps = epsilon_from_rdp(orders, flat, 1e-5);
  CHECK(eps.epsilon == Approx(1.32783806176).margin(1e-7));
  CHECK(eps.order == 32);
  CHECK(delta_from_rdp(orders, flat, 1.32783806176).delta == Approx(1e-5).margin(1e-12));

  const auto fine = range_orders(1.0, 0.001, 99000);
  std::vector<double> gaussian;
  for (double a : fine) gaussian.push_back(rdp_poisson_gaussian(1, 4.530877117, a));
  CHECK(epsilon_from_rdp(fine, gaussian, 1e-6).epsilon == Approx(1.0).margin(1e-7));
  CHECK(delta_from_rdp(fine, gaussian, 1.0).delta == Approx(1e-6).margin(1e-12));

  // D9: the conversion is never tighter than the exact Gaussian curve and never looser than the
  // simple bound.
  const auto d9_orders = range_orders(1.0, 0.1, 495);
  std::vector<double> unit;
  for (double a : d9_orders) unit.push_back(rdp_gaussian(1, a));
  for (int k = 0; k < 500; ++k) {
    const double e = 0.1 * k;
    const double exact =
        0.5 * std::erfc((e - 0.5) / std::sqrt(2.0)) - std::exp(e) * 0.5 * std::erfc((e + 0.5) / std::sqrt(2.0));
    const double upper = e < 0.5 ? 1.0 : std::exp(-(e - 0.5) * (e - 0.5) / 2);
    const double got = delta_from_rdp(d9_orders, unit, e).delta;
    INFO("epsilon " << e);
    CHECK(got >= exact - 1e-300);
    CHECK(got <= upper + 1e-300);
  }

  // D10: delta(epsilon(delta)) gives delta back.
  const auto d10_orders = range_orders(2, 1, 48);
  for (double q : {0.0, 0.01, 0.1, 0.8, 1.0})
    for (double z : {0.0, 0.1, 1.0, 10.0, 100.0})
      for (double delta : {0.99, 0.9, 0.1, 0.01, 1e-3, 1e-5, 1e-9, 1e-12}) {
        std::vector<double> rdp;
        for (double a : d10_orders) rdp.push_back(rdp_poisson_gaussian(q, z, a));
        const double e = epsilon_from_rdp(d10_orders, rdp, delta).epsilon;
        const double back = delta_from_rdp(d10_orders, rdp, e).delta;
        INFO("q " << q << " z " << z << " delta " << delta);
        if (std::isinf(e))
          CHECK(back == 1.0);
        else if (e == 0)
          CHECK(back <= delta);
        else
          CHECK(back == Approx(delta).margin(1e-7));
      }
}

TEST_CASE("Opacus's vectors: O1, O1', O4 and the calibrations O2, O3", "[privacy]") {
  const auto opacus = epsilon_of(Sampling::Poisson, 0.04, 1.5, 2250, 1e-5, opacus_mode());
  CHECK(opacus.epsilon == Approx(7.32911117143).margin(1e-7));
  CHECK(opacus.order == Approx(3.9));
  CHECK(epsilon_of(Sampling::Poisson, 0.04, 1.5, 2250, 1e-5, {opacus_orders(), FracMode::Abs, Conversion::Opacus})
            .epsilon == Approx(7.3293347024).epsilon(1e-9));
  CHECK(epsilon_of(Sampling::Poisson, 0.04, 1.5, 2250, 1e-5).epsilon == Approx(7.3293347024).epsilon(1e-9));

  RdpAccountant two_events({range_orders(2, 1, 31), FracMode::Signed, Conversion::Opacus});
  two_events.compose(Sampling::Poisson, 1e-5, 1.0, 10);
  two_events.compose(Sampling::Poisson, 1e-4, 3.0, 4);
  CHECK(two_events.epsilon(1e-5).epsilon == Approx(0.33634406339).epsilon(1e-9));
  CHECK(two_events.epsilon(1e-5).order == 23);

  CHECK(calibrate_noise(8, 1e-5, Sampling::Poisson, 0.04, 2250, opacus_mode()) == 1.416015625);
  CHECK(calibrate_noise(8, 1e-5, Sampling::Poisson, 0.04, 2000, opacus_mode()) == 1.356201171875);
}

TEST_CASE("Sampling without replacement: TF-Privacy's T1, T2 and the spec's X5, X6", "[privacy]") {
  const std::vector<double> orders{1.001, 1.5, 2.5, 5, 50, 100, 256, 512, 1024, kInf};
  const auto rdp = curve_of(Sampling::FixedSize, 0.01, 2.5, 50, {orders});
  const std::vector<double> want{0.003470097, 0.003470097, 0.004638608, 0.008763361, 0.09847415,
                                 167.766389,  792.974427,  1817.35871,  3865.55029};
  for (std::size_t j = 0; j < want.size(); ++j) CHECK(rdp[j] == Approx(want[j]).epsilon(1e-6));
  CHECK(rdp.back() == kInf);
  CHECK(10 * rdp_poisson_gaussian(0.1, 2, 5) == Approx(0.0773696849).margin(1e-9));
  const auto x5 = epsilon_of(Sampling::FixedSize, 0.01, 1.0, 1000, 1e-5);
  CHECK(x5.epsilon == Approx(3.5761114823505515).epsilon(1e-9));
  CHECK(x5.order == 6.0);
  const auto x6 = epsilon_of(Sampling::FixedSize, 0.01, 2.0, 1000, 1e-5);
  CHECK(x6.epsilon == Approx(1.4452982421210192).epsilon(1e-9));
  CHECK(x6.order == 13);
}

TEST_CASE("The spec's accounting vectors X1 to X11", "[privacy]") {
  struct Case {
    Sampling sampling;
    double q, z;
    std::uint64_t steps;
    double epsilon, order;
  };
  const std::vector<Case> cases{{Sampling::Poisson, 0.01, 1.0, 1000, 2.1013665254202714, 7.8},
                                {Sampling::Poisson, 0.001, 1.0, 2000, 0.6900294812472981, 13},
                                {Sampling::Poisson, 0.05, 0.8, 200, 8.743239135583078, 2.9},
                                {Sampling::None, 1, 1.0, 10, 19.05359753163139, 2.5},
                                {Sampling::None, 1, 5.0, 50, 7.077391578166641, 4.2},
                                {Sampling::None, 1, 1.0, 1, 4.728507067217623, 5.4},
                                {Sampling::Poisson, 0.01, 2.5, 50, 0.14478637929899457, 57}};
  for (const auto& c : cases) {
    INFO(sampling_name(c.sampling) << " q " << c.q << " z " << c.z << " T " << c.steps);
    const auto got = epsilon_of(c.sampling, c.q, c.z, c.steps, 1e-5);
    CHECK(got.epsilon == Approx(c.epsilon).epsilon(1e-9));
    CHECK(got.order == Approx(c.order));
  }
  CHECK(epsilon_of(Sampling::Poisson, 0.01, 1.0, 1000, 1e-5, opacus_mode()).epsilon ==
        Approx(2.1013652716).epsilon(1e-9));
  CHECK(epsilon_of(Sampling::Poisson, 0.05, 0.8, 200, 1e-5, opacus_mode()).epsilon ==
        Approx(8.7318299324).epsilon(1e-9));
  CHECK(epsilon_of(Sampling::Poisson, 0.01, 2.5, 50, 1e-5, opacus_mode()).epsilon ==
        Approx(0.1447863793).epsilon(1e-9));
  RdpAccountant heterogeneous;  // X10: rates that change between rounds compose
  heterogeneous.compose(Sampling::Poisson, 0.02, 1.0, 500);
  heterogeneous.compose(Sampling::Poisson, 0.005, 1.0, 500);
  CHECK(heterogeneous.epsilon(1e-5).epsilon == Approx(3.2112918010815443).epsilon(1e-9));
  CHECK(heterogeneous.epsilon(1e-5).order == Approx(5.9));
  RdpAccountant x4;
  x4.compose(Sampling::Poisson, 0.01, 1.0, 1000);
  CHECK(x4.delta(2).delta == Approx(1.9812564713985307e-05).epsilon(1e-9));
  CHECK(x4.delta(2).order == Approx(7.7));
}
