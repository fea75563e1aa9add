#include "engine/sim/secure_aggregation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "engine/core/rng.hpp"
#include "engine/population/availability.hpp"
#include "engine/privacy/philox.hpp"
#include "engine/privacy/secagg_encoding.hpp"
#include "engine/privacy/secagg_protocol.hpp"
#include "engine/sim/private_aggregation.hpp"
#include "engine/sim/roster.hpp"

namespace drift {
namespace {

using privacy::SecAggSession;
using privacy::SecAggStage;

constexpr std::array<SecAggStage, privacy::kSecAggStages> kStages{SecAggStage::advertise_keys, SecAggStage::share_keys,
                                                                  SecAggStage::masked_input, SecAggStage::consistency,
                                                                  SecAggStage::unmasking};

// The neighbourhood size s and threshold t for a cohort of n.
std::pair<std::uint32_t, std::uint32_t> shares_and_threshold(const SecureAggregationConfig& sa, std::uint32_t n) {
  const std::uint32_t s =
      sa.protocol == SecAggProtocol::secagg_plus ? privacy::share_rule(n, sa.shares, 0.5).shares : n;
  if (sa.threshold > 0)
    return {s, std::max<std::uint32_t>(static_cast<std::uint32_t>(std::nearbyint(sa.threshold * s)), 2)};
  return {s, sa.consistency_check ? 2 * s / 3 + 1 : s / 2 + 1};
}

// SecAgg+: the cohort shuffled into a ring from the round's own stream, as Flower shuffles it.
privacy::NeighbourGraph neighbours(const SecureAggregationConfig& sa, std::uint32_t n, std::uint32_t s,
                                   std::uint64_t seed, std::uint32_t round) {
  if (sa.protocol == SecAggProtocol::secagg || s >= n) return privacy::complete_graph(n);
  std::vector<std::uint32_t> ring(n);
  std::iota(ring.begin(), ring.end(), 0u);
  Rng rng(stream_seed(seed, "secagg ring", {round}));
  for (std::uint32_t k = n; k > 1; --k) std::swap(ring[k - 1], ring[rng.below(k)]);
  return privacy::ring_graph(ring, s / 2);
}

std::uint64_t pow2(std::int64_t bits) { return std::uint64_t{1} << bits; }

}  // namespace

struct SecureAggregator::Inputs {
  const SecAggSession* session = nullptr;
  std::vector<std::uint32_t> clients;    // U3, ascending ids
  std::vector<std::uint32_t> positions;  // their positions in the cohort
  std::vector<std::vector<double>> x;    // their inputs
  std::vector<double> weight;            // their weights over W (1 with DP)
  bool sum_only = false;                 // DP: decode the sum, not the weighted mean
};

SecureAggregator::SecureAggregator(const Scenario& scenario, const Population& population)
    : scenario_(scenario), population_(population) {
  const auto& sa = scenario.secure_aggregation;
  const auto largest = population.num_samples.empty()
                           ? 1
                           : *std::max_element(population.num_samples.begin(), population.num_samples.end());
  max_weight_ = sa.max_weight > 0 ? sa.max_weight : static_cast<double>(std::max<std::uint64_t>(largest, 1));
}

privacy::SecAggSession SecureAggregator::run_stages(std::uint32_t round, double start,
                                                    const std::vector<ClientUpdate>& updates, std::uint64_t parameters,
                                                    Roster& roster, RoundReport& report, double& end) const {
  const auto& sa = scenario_.secure_aggregation;
  const auto n = static_cast<std::uint32_t>(updates.size());
  const auto [s, t] = shares_and_threshold(sa, n);
  std::vector<std::uint32_t> ids;
  for (const auto& u : updates) ids.push_back(u.client_id);
  SecAggSession session(neighbours(sa, n, s, scenario_.seed, round), t, sa.consistency_check, std::move(ids));
  report.sa_shares = s;
  report.sa_threshold = t;
  const bool flower = sa.encoding == SecAggEncoding::flower;  // its first element is the weight
  const privacy::SecAggSizes sizes{sa.key_bits, sa.share_bits, static_cast<double>(flower ? sa.modulus_bits : sa.bits),
                                   parameters + (flower ? 1 : 0)};
  const privacy::SecAggUnitCosts costs{sa.keygen_seconds,          sa.key_agreement_seconds, sa.cipher_seconds_per_byte,
                                       sa.cipher_seconds_per_byte, sa.field_op_seconds,      sa.prg_seconds_per_element,
                                       sa.add_seconds_per_element, sa.server_speed};
  double now = start, bits_up = 0, bits_down = 0;
  for (const auto stage : kStages) {
    if (!session.runs(stage)) continue;
    std::vector<bool> completed(n, false);
    double stage_end = now;
    for (std::uint32_t u = 0; u < n; ++u) {
      if (!session.active(u)) continue;
      const auto c = updates[u].client_id;
      const auto& sys = population_.system[c];
      const auto bits = session.bits(u, stage, sizes);
      const double done = now + privacy::stage_done(sys.latency, sys.down_bandwidth * 8, sys.up_bandwidth * 8, bits,
                                                    session.client_work(u, stage, sizes, costs));
      double stop = roster.offline_between(c, now, done);
      if (sa.dropout > 0 && privacy::NoiseStream(scenario_.seed, round, privacy::NoiseTag::Dropout, c)
                                    .uniforms(static_cast<std::uint64_t>(stage))[0] < sa.dropout)
        stop = std::min(stop, now);
      const bool timed_out = sa.stage_timeout > 0 && done > now + sa.stage_timeout;
      bits_down += bits.down;
      if (stop >= done && !timed_out) {
        completed[u] = true;
        bits_up += bits.up;
        stage_end = std::max(stage_end, done);
      } else {
        stage_end = std::max(stage_end, timed_out && stop >= done ? now + sa.stage_timeout : stop + sa.detection_delay);
      }
    }
    if (sa.stage_timeout > 0) stage_end = std::min(stage_end, now + sa.stage_timeout);
    session.end_stage(stage, completed);
    now = stage_end + session.server_work(stage, sizes, costs);
    if (session.aborted()) break;
  }
  const auto& survivors = session.survivors();
  const auto reached = session.aborted() ? static_cast<std::size_t>(session.abort_stage()) + 1 : survivors.size();
  report.sa_survivors.assign(survivors.begin(), survivors.begin() + static_cast<std::ptrdiff_t>(reached));
  report.sa_aborted = session.aborted();
  if (session.aborted()) {
    report.sa_abort_stage = privacy::stage_name(session.abort_stage());
    report.sa_abort_reason = session.abort_reason();
  }
  report.sa_bytes_up = static_cast<std::uint64_t>(bits_up / 8);
  report.sa_bytes_down = static_cast<std::uint64_t>(bits_down / 8);
  report.sa_seconds = now - start;
  double plain = 0.0;  // the slowest plain upload of the same model in float32
  for (const auto& u : updates) {
    const auto& sys = population_.system[u.client_id];
    plain = std::max(plain, sys.latency + static_cast<double>(parameters) * 4 / sys.up_bandwidth);
  }
  report.sa_extra_seconds = report.sa_seconds - plain;
  end = now;
  return session;
}

bool SecureAggregator::run(std::uint32_t round, double start, const NamedTensors& global,
                           std::vector<ClientUpdate>& updates, Roster& roster, DpMechanism* dp, RoundReport& report,
                           double& end) {
  report.sa = true;
  const auto base = flat_floats(global);
  const auto session = run_stages(round, start, updates, base.size(), roster, report, end);
  if (session.aborted()) return false;  // nothing released: every update is discarded
  Inputs in;
  in.session = &session;
  in.sum_only = dp != nullptr;
  std::vector<ClientUpdate> kept;
  for (std::uint32_t u = 0; u < updates.size(); ++u) {
    auto& update = updates[u];
    if (!session.in_sum()[u]) {  // it stopped before its masked input arrived
      report.discarded_samples += update.num_samples;
      continue;
    }
    in.clients.push_back(update.client_id);
    in.positions.push_back(u);
    if (dp) {
      in.x.push_back(dp->clipped_change(update.weights, base, update.client_id, round));
      if (scenario_.privacy.mode == PrivacyMode::distributed)
        dp->add_distributed_noise(in.x.back(), update.client_id, round, session.threshold());
      in.weight.push_back(1.0);
    } else {
      auto x = flat_floats(update.weights);
      for (std::size_t k = 0; k < x.size(); ++k) x[k] -= base[k];
      in.x.push_back(std::move(x));
      in.weight.push_back(static_cast<double>(update.num_samples) / max_weight_);
    }
    kept.push_back(std::move(update));
  }
  auto decoded = sum_inputs(round, in, report);
  NamedTensors model;
  if (dp) {  // the noise goes on the decoded sum, as the server adds it after unmasking
    const auto summed = static_cast<std::uint32_t>(kept.size());
    dp->add_central_noise(decoded, round);
    const double denominator = dp->denominator(summed);
    model = add_flat(global, decoded, 1.0 / denominator);
    dp->finish(summed, denominator, round);
  } else {
    model = add_flat(global, decoded, 1.0);
  }
  for (auto& u : kept) u.weights = model;  // shared tensors, never written again
  updates = std::move(kept);
  return true;
}

std::vector<double> SecureAggregator::sum_inputs(std::uint32_t round, const Inputs& in, RoundReport& report) const {
  if (scenario_.secure_aggregation.encoding == SecAggEncoding::flower) return flower_sum(round, in, report);
  return fixed_point_sum(in, report);
}

namespace {

// Mean square of decoded - scale * exact: what rounding to integers cost.
double quantization_mse(const std::vector<double>& decoded, const std::vector<double>& exact, double scale) {
  if (decoded.empty()) return 0.0;
  double total = 0.0;
  for (std::size_t j = 0; j < decoded.size(); ++j)
    total += (decoded[j] - scale * exact[j]) * (decoded[j] - scale * exact[j]);
  return total / static_cast<double>(decoded.size());
}

}  // namespace

std::vector<double> SecureAggregator::flower_sum(std::uint32_t round, const Inputs& in, RoundReport& report) const {
  const auto& sa = scenario_.secure_aggregation;
  // Weights arrive divided by W, so W is 1 here; with DP every weight is 1 (Flower's W = 1).
  const privacy::FlowerEncoding e{sa.clip_range, pow2(sa.quantization_bits), pow2(sa.modulus_bits), 1.0};
  privacy::ModularSum sum(e.modulus);
  std::vector<std::vector<std::uint64_t>> encoded;
  std::vector<double> exact(in.x.front().size(), 0.0);  // the sum of the clipped inputs, unrounded
  for (std::size_t i = 0; i < in.x.size(); ++i) {
    privacy::RoundingDraw draw;
    if (sa.rounding == SecAggRounding::stochastic) {
      const privacy::NoiseStream stream(scenario_.seed, round, privacy::NoiseTag::StochasticRounding, in.clients[i]);
      // Coordinates 2k and 2k + 1 share Philox block k: draw each block once.
      draw = [stream, block = ~std::uint64_t{0}, pair = std::array<double, 2>{}](std::uint64_t j) mutable {
        if (j / 2 != block) pair = stream.uniforms(block = j / 2);
        return pair[j % 2];
      };
    }
    auto enc = privacy::encode_flower(in.x[i], in.weight[i], e, draw);
    report.sa_clipped_coords += enc.clipped_coords;
    const double dq = static_cast<double>(enc.values[0]) / static_cast<double>(e.quantization);
    for (std::size_t j = 0; j < exact.size(); ++j) exact[j] += std::clamp(dq * in.x[i][j], -e.clip_range, e.clip_range);
    sum.add(enc.values);
    if (sa.simulate_masks) encoded.push_back(std::move(enc.values));
  }
  const auto agg = sum.reduced();
  report.sa_overflows = sum.overflow_count();
  if (sa.simulate_masks) check_masks(round, in, encoded, agg);
  const auto n = static_cast<std::uint32_t>(in.x.size());
  auto decoded = in.sum_only ? privacy::decode_flower_sum(agg, n, e) : privacy::decode_flower_mean(agg, n, e);
  const double scale = in.sum_only ? 1.0 : static_cast<double>(e.quantization) / static_cast<double>(agg[0]);
  report.sa_quantization_mse = quantization_mse(decoded, exact, scale);
  return decoded;
}

std::vector<double> SecureAggregator::fixed_point_sum(const Inputs& in, RoundReport& report) const {
  const auto& sa = scenario_.secure_aggregation;
  const privacy::FixedPoint f{sa.scale, static_cast<int>(sa.bits)};
  const bool flsim = sa.encoding == SecAggEncoding::flsim;
  const double hi = std::ldexp(1.0, static_cast<int>(sa.bits - 1)) - 1,
               lo = -std::ldexp(1.0, static_cast<int>(sa.bits - 1));
  const std::size_t d = in.x.front().size();
  std::vector<std::int64_t> acc(d, 0);
  std::vector<double> exact(d, 0.0), exact_integers(d, 0.0);
  std::uint64_t positive_clamps = 0, wraps = 0;
  double weights = 0.0;
  for (std::size_t i = 0; i < in.x.size(); ++i) {
    for (std::size_t j = 0; j < d; ++j) {
      const double y = in.weight[i] * in.x[i][j];
      const auto v = privacy::flsim_convert(y, f, positive_clamps);
      report.sa_clipped_coords += f.scale * y < lo ? 1 : 0;  // FLSim counts the positive side only
      exact[j] += std::clamp(f.scale * y, lo, hi) / f.scale;
      exact_integers[j] += static_cast<double>(v);
      acc[j] = flsim ? privacy::flsim_accumulate(acc[j], v, f, wraps) : privacy::signed_mod_accumulate(acc[j], v, f);
    }
    weights += in.weight[i];
  }
  report.sa_clipped_coords += positive_clamps;
  report.sa_overflows = flsim ? wraps
                              : static_cast<std::uint64_t>(std::count_if(exact_integers.begin(), exact_integers.end(),
                                                                         [&](double s) { return s < lo || s > hi; }));
  const double divide = f.scale * (in.sum_only ? 1.0 : weights);
  std::vector<double> decoded(d);
  for (std::size_t j = 0; j < d; ++j) decoded[j] = static_cast<double>(acc[j]) / divide;
  report.sa_quantization_mse = quantization_mse(decoded, exact, 1.0 / (in.sum_only ? 1.0 : weights));
  return decoded;
}

// Each member of U3 adds a pairwise mask for every neighbour of U2 (+ if its position is the
// larger) and its self mask; the server removes U3's self masks and, for each client of
// U2 \ U3, the pairwise masks its neighbours in U3 added against it.
void SecureAggregator::check_masks(std::uint32_t round, const Inputs& in,
                                   const std::vector<std::vector<std::uint64_t>>& encoded,
                                   const std::vector<std::uint64_t>& plain) const {
  const auto& session = *in.session;
  const auto& graph = session.graph();
  const auto& u2 = session.shared_keys();
  const auto& u3 = session.in_sum();
  const std::uint64_t m = pow2(scenario_.secure_aggregation.modulus_bits);
  const auto mask = [&](std::string_view what, std::initializer_list<std::uint64_t> ids) {
    Rng rng(stream_seed(scenario_.seed, what, ids));
    std::vector<std::uint64_t> v(plain.size());
    for (auto& e : v) e = rng.below(m);
    return v;
  };
  const auto pair = [&](std::uint32_t a, std::uint32_t b) {
    return mask("secagg pair mask", {round, std::min(a, b), std::max(a, b)});
  };
  const auto add = [&](std::vector<std::uint64_t>& to, const std::vector<std::uint64_t>& v, bool plus) {
    for (std::size_t k = 0; k < to.size(); ++k) to[k] = (to[k] + (plus ? v[k] : m - v[k])) % m;
  };
  std::vector<std::uint64_t> server(plain.size(), 0);
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    const auto p = in.positions[i];
    auto masked = encoded[i];
    for (auto v : graph[p])
      if (u2[v]) add(masked, pair(p, v), p > v);
    add(masked, mask("secagg self mask", {round, p}), true);
    add(server, masked, true);
  }
  for (auto p : in.positions) add(server, mask("secagg self mask", {round, p}), false);
  for (std::uint32_t v = 0; v < graph.size(); ++v)
    if (u2[v] && !u3[v])
      for (auto p : graph[v])
        if (u3[p]) add(server, pair(p, v), p < v);
  if (server != plain) throw std::logic_error("secure aggregation: the simulated masks did not cancel");
}

std::string refused_secure_aggregation(const Scenario& s) {
  const auto& sa = s.secure_aggregation;
  if (s.simulation.mode != SimulationMode::sync)
    return "the protocol runs over a sync round's cohort; under " + name_of(s.simulation.mode) +
           " updates arrive one at a time, with no cohort to mask them in";
  if (s.simulation.late_updates == LateUpdates::stale)
    return "simulation.late_updates = \"stale\" folds an update into a later round, whose protocol it never took "
           "part in";
  if (sa.encoding == SecAggEncoding::flower && sa.quantization_bits >= sa.modulus_bits)
    return "the modulus 2^modulus_bits must be above the quantisation range 2^quantization_bits";
  return "";
}

}  // namespace drift
